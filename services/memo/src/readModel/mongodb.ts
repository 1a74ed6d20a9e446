import type { Collection, Db, Document, MongoClient, Filter as MongoFilter } from 'mongodb';
import { NATIVE_FILTER_FIELDS, filterValues, matchesFilters, type Filter, type MemoView as Memo } from '@memex/contracts';
import { connectMongo, isDuplicateKeyError } from '@memex/runtime';
import { filterable, foldTitle, type MemoListPage, type MemoReadModel, type MemoRecord, type TitleSearch } from './port';

/** One value a filter compares against (`filterValues`), under `n:<native field>` or `m:<metadata key>`. */
interface FilterAttr {
  k: string;
  v: string;
  /** `v.toLowerCase()`, for `contains`. */
  l: string;
}

interface MemoDoc {
  _id: string;
  projectId: string;
  version: number;
  referenceId: string | null;
  titleFolded: string;
  /** The memo's created_at, for the newest-first list. */
  createdAt?: string;
  archived: boolean;
  expirationDate: string | null;
  // JSON text, not BSON: metadata keys are the user's and may start with '$' or hold dots.
  doc: string;
  attrs: FilterAttr[];
  /** Some attr key or value held a lone surrogate, which BSON stores as U+FFFD, so `attrs` may not be exact. */
  lossy: boolean;
}

interface RemovedDoc {
  _id: string;
  projectId: string;
  version: number;
}

const attrKey = (filterType: Filter['filter_type'], field: string) => `${filterType === 'native_field' ? 'n' : 'm'}:${field}`;

const LONE_SURROGATE = /\p{Cs}/u;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

/** Longer filter values are matched in JS only, to stay clear of the server's pattern limits. */
const MAX_PATTERN_CHARS = 1_000;

/** A PCRE pattern matching `text` literally. */
function escapeRegex(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f) out += `\\x{${code.toString(16)}}`;
    else if (/[\\^$.|?*+()[\]{}\-/#]/.test(ch)) out += `\\${ch}`;
    else out += ch;
  }
  return out;
}

/**
 * A query that selects every document `matchesFilter` accepts (and, for well-formed values on
 * well-formed data, exactly those), or undefined when only JS can decide. Negations let lossy
 * documents through: U+FFFD could make a stored value equal to the filter's when the real one is not.
 */
function compileFilter(filter: Filter): MongoFilter<MemoDoc> | undefined {
  // BSON stores a lone surrogate as U+FFFD; such a key could equal another in the query.
  if (!wellFormed(filter.field)) return undefined;
  const k = attrKey(filter.filter_type, filter.field);
  const { operator, value } = filter;
  const text = typeof value === 'string' && wellFormed(value) ? value : undefined;
  const list = Array.isArray(value) && value.every((v) => typeof v === 'string' && wellFormed(v)) ? value : undefined;
  const pattern = text !== undefined && text.length <= MAX_PATTERN_CHARS ? text : undefined;
  const some = (condition: Document): MongoFilter<MemoDoc> => ({ attrs: { $elemMatch: { k, ...condition } } });
  const none = (condition: Document): MongoFilter<MemoDoc> => ({ $or: [{ lossy: true }, { $nor: [some(condition)] }] });
  switch (operator) {
    case 'eq':
      return text === undefined ? undefined : some({ v: text });
    case 'neq':
      return text === undefined ? undefined : none({ v: text });
    case 'in':
      return list === undefined ? undefined : some({ v: { $in: list } });
    case 'not_in':
      return list === undefined ? undefined : none({ v: { $in: list } });
    case 'startswith':
      return pattern === undefined ? undefined : some({ v: { $regex: `^${escapeRegex(pattern)}` } });
    case 'endswith':
      return pattern === undefined ? undefined : some({ v: { $regex: `${escapeRegex(pattern)}\\z` } });
    case 'contains':
      // On the stored lower-cased value, case-sensitively: PCRE's caseless matching folds a few
      // characters differently from toLowerCase (İ), and could miss what JS accepts.
      return pattern === undefined ? undefined : some({ l: { $regex: escapeRegex(pattern.toLowerCase()) } });
    default: {
      const never: never = operator;
      throw new Error(`unknown operator ${String(never)}`);
    }
  }
}

function filterAttrs(memo: Memo): FilterAttr[] {
  const f = filterable(memo);
  const attrs: FilterAttr[] = [];
  const add = (filterType: Filter['filter_type'], field: string) => {
    const k = attrKey(filterType, field);
    for (const v of filterValues(f, { field, filter_type: filterType })) attrs.push({ k, v, l: v.toLowerCase() });
  };
  for (const field of NATIVE_FILTER_FIELDS) add('native_field', field);
  for (const key of Object.keys(f.metadata)) add('custom_metadata', key);
  return attrs;
}

const toRecord = (row: Pick<MemoDoc, 'projectId' | 'version' | 'doc'>): MemoRecord => ({
  projectId: row.projectId,
  version: row.version,
  memo: JSON.parse(row.doc) as Memo,
});

const RECORD_PROJECTION = { _id: 0, projectId: 1, version: 1, doc: 1 } as const;

/**
 * The read model in MongoDB: `memos` (one document per memo) and `removed_memos` (the id and
 * version of each removed memo). Title searches and filters run in the query as far as they can be
 * exact (or err only towards selecting more); every candidate is then checked with `matchesFilters`,
 * so results equal the reference semantics.
 */
export class MongoMemoReadModel implements MemoReadModel {
  readonly kind = 'mongodb' as const;
  private readonly memos: Collection<MemoDoc>;
  private readonly removed: Collection<RemovedDoc>;
  private readonly indexed: Promise<void>;

  /** Connects with majority writes and reads; `close()` then closes the client too. */
  static async open(url: string, dbName: string): Promise<MongoMemoReadModel> {
    const client = await connectMongo(url);
    const readModel = new MongoMemoReadModel(client.db(dbName), client);
    try {
      await readModel.ready();
    } catch (error) {
      await client.close();
      throw error;
    }
    return readModel;
  }

  /** `ownedClient` is closed by `close()`; without one the caller owns the connection. */
  constructor(
    db: Db,
    private readonly ownedClient?: MongoClient,
  ) {
    this.memos = db.collection<MemoDoc>('memos');
    this.removed = db.collection<RemovedDoc>('removed_memos');
    this.indexed = this.createIndexes();
    // Every operation awaits this; the handler only keeps an early failure from going unhandled.
    this.indexed.catch(() => undefined);
  }

  /** Resolves once the indexes exist (created on construction; idempotent). */
  ready(): Promise<void> {
    return this.indexed;
  }

  private async createIndexes(): Promise<void> {
    await this.memos.createIndexes([
      { key: { projectId: 1, referenceId: 1 }, name: 'reference' },
      { key: { projectId: 1, archived: 1, titleFolded: 1, _id: 1 }, name: 'title' },
      { key: { archived: 1, expirationDate: 1 }, name: 'expiry' },
      { key: { projectId: 1, createdAt: -1, _id: -1 }, name: 'list' },
    ]);
  }

  async get(memoId: string): Promise<MemoRecord | undefined> {
    await this.indexed;
    const row = await this.memos.findOne({ _id: memoId }, { projection: RECORD_PROJECTION });
    return row ? toRecord(row) : undefined;
  }

  async findByReference(projectId: string, referenceId: string): Promise<MemoRecord | undefined> {
    await this.indexed;
    const row = await this.memos.findOne({ projectId, referenceId }, { sort: { version: -1 }, projection: RECORD_PROJECTION });
    return row ? toRecord(row) : undefined;
  }

  async upsert(record: MemoRecord): Promise<void> {
    await this.indexed;
    const id = record.memo.uuid;
    const { version } = record;
    if (await this.removedSince(id, version)) return;
    const doc = JSON.stringify(record.memo);
    // Attributes come from the memo as `get` will return it, so they agree with the JS re-check.
    const memo = JSON.parse(doc) as Memo;
    const attrs = filterAttrs(memo);
    const fields: Omit<MemoDoc, '_id'> = {
      projectId: record.projectId,
      version,
      referenceId: memo.client_reference_id,
      titleFolded: foldTitle(memo.title),
      createdAt: memo.created_at,
      archived: memo.archived,
      expirationDate: memo.expiration_date,
      doc,
      attrs,
      lossy: attrs.some((a) => !wellFormed(a.k) || !wellFormed(a.v)),
    };
    const older = { _id: id, version: { $lt: version } };
    try {
      await this.memos.updateOne(older, { $set: fields }, { upsert: true });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // The memo exists: at this version or a later one (nothing to do), or inserted an instant ago
      // by a concurrent upsert that may be older than this one.
      await this.memos.updateOne(older, { $set: fields });
    }
    // A removal between the check above and the write must still win.
    const removal = await this.removed.findOne({ _id: id, version: { $gte: version } });
    if (removal) await this.memos.deleteOne({ _id: id, version: { $lte: removal.version } });
  }

  private async removedSince(memoId: string, version: number): Promise<boolean> {
    return (await this.removed.findOne({ _id: memoId, version: { $gte: version } }, { projection: { _id: 1 } })) !== null;
  }

  async remove(projectId: string, memoId: string, version: number): Promise<void> {
    await this.indexed;
    const tombstone = () => this.removed.updateOne({ _id: memoId }, { $max: { version }, $setOnInsert: { projectId } }, { upsert: true });
    try {
      await tombstone();
    } catch (error) {
      // Two removals raced to insert it; the second now finds it.
      if (!isDuplicateKeyError(error)) throw error;
      await tombstone();
    }
    // Tombstone first: a crash in between leaves the memo readable until the remove is repeated
    // (the outbox sweep projects the stream again), never a removal a late write can undo.
    await this.memos.deleteOne({ _id: memoId });
  }

  async searchTitles(projectId: string, { mode, query, filters, limit }: TitleSearch): Promise<MemoRecord[]> {
    await this.indexed;
    const out: MemoRecord[] = [];
    if (limit <= 0) return out;
    const needle = foldTitle(query);
    const conditions: MongoFilter<MemoDoc>[] = [{ projectId, archived: false }];
    if (wellFormed(needle) && needle.length <= MAX_PATTERN_CHARS) {
      conditions.push({ titleFolded: { $regex: mode === 'startswith' ? `^${escapeRegex(needle)}` : escapeRegex(needle) } });
    }
    for (const filter of filters) {
      const compiled = compileFilter(filter);
      if (compiled) conditions.push(compiled);
    }
    const titleMatches =
      mode === 'startswith' ? (title: string) => foldTitle(title).startsWith(needle) : (title: string) => foldTitle(title).includes(needle);
    const cursor = this.memos.find({ $and: conditions }, { projection: RECORD_PROJECTION, sort: { titleFolded: 1, _id: 1 } });
    try {
      for await (const row of cursor) {
        const record = toRecord(row);
        if (!titleMatches(record.memo.title) || !matchesFilters(filterable(record.memo), filters)) continue;
        out.push(record);
        if (out.length >= limit) break;
      }
    } finally {
      await cursor.close();
    }
    return out;
  }

  async listMemos(projectId: string, { filters, offset, limit }: MemoListPage): Promise<{ records: MemoRecord[]; count: number }> {
    await this.indexed;
    const sort = { createdAt: -1, _id: -1 } as const;
    if (filters.length === 0) {
      const [rows, count] = await Promise.all([
        limit > 0 ? this.memos.find({ projectId }, { projection: RECORD_PROJECTION, sort, skip: offset, limit }).toArray() : [],
        this.memos.countDocuments({ projectId }),
      ]);
      return { records: rows.map(toRecord), count };
    }
    const conditions: MongoFilter<MemoDoc>[] = [{ projectId }];
    for (const filter of filters) {
      const compiled = compileFilter(filter);
      if (compiled) conditions.push(compiled);
    }
    const records: MemoRecord[] = [];
    let count = 0;
    const cursor = this.memos.find({ $and: conditions }, { projection: RECORD_PROJECTION, sort });
    try {
      for await (const row of cursor) {
        const record = toRecord(row);
        if (!matchesFilters(filterable(record.memo), filters)) continue;
        if (count >= offset && records.length < limit) records.push(record);
        count++;
      }
    } finally {
      await cursor.close();
    }
    return { records, count };
  }

  async dueForArchive(now: string, limit: number): Promise<{ projectId: string; memoId: string }[]> {
    await this.indexed;
    // The driver reads a limit of 0 as "no limit".
    if (limit <= 0) return [];
    const rows = await this.memos
      .find({ archived: false, expirationDate: { $lte: now } }, { projection: { projectId: 1 }, sort: { expirationDate: 1 }, limit })
      .toArray();
    return rows.map((r) => ({ projectId: r.projectId, memoId: r._id }));
  }

  async nextExpiration(): Promise<string | undefined> {
    await this.indexed;
    // A string bound keeps nulls out (comparisons only match values of the same BSON type).
    const row = await this.memos.findOne(
      { archived: false, expirationDate: { $gte: '' } },
      { projection: { expirationDate: 1 }, sort: { expirationDate: 1 } },
    );
    return row?.expirationDate ?? undefined;
  }

  async close(): Promise<void> {
    await this.ownedClient?.close();
  }
}
