import { compressText, decompressText, groupCommit, openSqlite, uuidFromBytes, uuidToBytes, type GroupCommit, type SqliteDatabase } from '@memex/runtime';
import { isSubjectToken, Subjects } from '@memex/contracts';
import { VersionConflictError, type AppendResult, type EventMeta, type EventStore, type NewEvent, type ReadStreamResult, type StoredEvent } from './port';

interface EventRow {
  position: number;
  id: string | Buffer;
  stream: string | Buffer;
  version: number;
  type: string;
  data: string | Buffer;
  meta: string | Buffer;
  occurred_at: string;
  subject: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE, -- a uuid's 16 bytes as a BLOB (packId), or the id as text
  stream      TEXT NOT NULL,        -- a memo or reference stream's ids as a BLOB (packStream), or the name as text
  version     INTEGER NOT NULL,
  type        TEXT NOT NULL,
  data        TEXT NOT NULL, -- JSON, or its raw deflate as a BLOB (compressText), or a sealed event's ids and box as bytes (packData)
  meta        TEXT NOT NULL, -- JSON, or its ids as bytes in a BLOB (packMeta); the subject only in its own column (rows written before: both)
  occurred_at TEXT NOT NULL,
  subject     TEXT, -- NULL: never published; '': the memo event subject of data's ids (derivedSubject)
  published   INTEGER NOT NULL DEFAULT 0,
  UNIQUE (stream, version)
);
CREATE INDEX IF NOT EXISTS events_outbox ON events (position) WHERE published = 0 AND subject IS NOT NULL;
`;

/**
 * The bus subject of a memo event, named by the ids its data carries in clear (sealed events too);
 * a row whose subject is that one stores '' instead: 88 bytes a row that say nothing new.
 */
function derivedSubject(data: unknown): string | undefined {
  const { memoId, projectId } = (data ?? {}) as { memoId?: unknown; projectId?: unknown };
  if (typeof memoId !== 'string' || typeof projectId !== 'string' || !isSubjectToken(memoId) || !isSubjectToken(projectId)) return undefined;
  return Subjects.memoEvents(projectId, memoId);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const META_COMMAND = 1;
const META_REQUEST = 2;

/**
 * Meta that is only a command id and a request id (what the memo service writes) as 1 + 16 + 16
 * bytes: a flag byte saying which are there, then each uuid's bytes. 33 bytes for the 103 of its
 * JSON; anything else stays JSON.
 */
function packMeta(meta: EventMeta): string | Buffer {
  const { commandId, requestId, ...rest } = meta;
  const ids = [commandId, requestId];
  if (Object.values(rest).some((v) => v !== undefined) || ids.some((id) => id !== undefined && (typeof id !== 'string' || !UUID.test(id)))) {
    return JSON.stringify(meta);
  }
  const parts = ids.filter((id): id is string => id !== undefined).map((id) => uuidToBytes(id));
  return Buffer.concat([Buffer.of((commandId !== undefined ? META_COMMAND : 0) | (requestId !== undefined ? META_REQUEST : 0)), ...parts]);
}

function unpackMeta(stored: string | Buffer): EventMeta {
  if (typeof stored === 'string') return JSON.parse(stored) as EventMeta;
  const flags = stored[0]!;
  const meta: EventMeta = {};
  let at = 1;
  if (flags & META_COMMAND) {
    meta.commandId = uuidFromBytes(stored, at);
    at += 16;
  }
  if (flags & META_REQUEST) meta.requestId = uuidFromBytes(stored, at);
  return meta;
}

/**
 * The first byte of a `packData` BLOB. As the first byte of a raw deflate stream it would declare
 * a block of the reserved type 3, so no `compressText` BLOB starts with it.
 */
const SEALED_DATA = 0xfe;

/**
 * A sealed event's data (`{ memoId, projectId, sealed }`, uuids and a base64 box, see
 * SealedEventStore) as 1 + 16 + 16 bytes and the box's own bytes: deflating the box's base64 (what
 * `compressText` did) cost more CPU than anything else in an append and still left a byte in
 * twelve. Anything else is JSON, deflated when that is smaller.
 */
function packData(data: unknown): string | Buffer {
  const { memoId, projectId, sealed, ...rest } = (data ?? {}) as { memoId?: unknown; projectId?: unknown; sealed?: unknown };
  if (Object.keys(rest).length === 0 && typeof memoId === 'string' && typeof projectId === 'string' && typeof sealed === 'string' && UUID.test(memoId) && UUID.test(projectId)) {
    const box = Buffer.from(sealed, 'base64');
    if (box.toString('base64') === sealed) return Buffer.concat([Buffer.of(SEALED_DATA), uuidToBytes(memoId), uuidToBytes(projectId), box]);
  }
  return compressText(JSON.stringify(data));
}

function unpackData(stored: string | Buffer): unknown {
  if (typeof stored !== 'string' && stored[0] === SEALED_DATA) {
    return { memoId: uuidFromBytes(stored, 1), projectId: uuidFromBytes(stored, 17), sealed: stored.toString('base64', 33) };
  }
  return JSON.parse(decompressText(stored)) as unknown;
}

const MEMO_STREAM = 1;
const REFERENCE_STREAM = 2;
const MEMO_STREAM_NAME = /^memo-([0-9a-f-]{36})-([0-9a-f-]{36})$/;
const REFERENCE_STREAM_NAME = /^memoref-([0-9a-f-]{36})-([0-9a-f]{64})$/;

/**
 * A memo stream's name (`memo-<project>-<memo>`, 78 characters) as 1 + 16 + 16 bytes, a reference
 * stream's (`memoref-<project>-<sha-256 hex>`) as 1 + 16 + 32; any other name stays text. The name
 * is stored twice a row (the row, the (stream, version) index), three rows a memo. A memo's stream
 * is read and written a dozen times while it is processed: the packed names of the streams last
 * used are kept (`packedStreams`).
 */
function packStream(name: string): string | Buffer {
  let packed = packedStreams.get(name);
  if (packed === undefined) {
    if (packedStreams.size >= PACKED_STREAMS_KEPT) packedStreams.clear();
    packedStreams.set(name, (packed = packStreamName(name)));
  }
  return packed;
}

const PACKED_STREAMS_KEPT = 4096;
const packedStreams = new Map<string, string | Buffer>();

function packStreamName(name: string): string | Buffer {
  const memo = MEMO_STREAM_NAME.exec(name);
  if (memo && UUID.test(memo[1]!) && UUID.test(memo[2]!)) return Buffer.concat([Buffer.of(MEMO_STREAM), uuidToBytes(memo[1]!), uuidToBytes(memo[2]!)]);
  const reference = REFERENCE_STREAM_NAME.exec(name);
  if (reference && UUID.test(reference[1]!)) return Buffer.concat([Buffer.of(REFERENCE_STREAM), uuidToBytes(reference[1]!), Buffer.from(reference[2]!, 'hex')]);
  return name;
}

function unpackStream(stored: string | Buffer): string {
  if (typeof stored === 'string') return stored;
  if (stored[0] === MEMO_STREAM) return `memo-${uuidFromBytes(stored, 1)}-${uuidFromBytes(stored, 17)}`;
  if (stored[0] === REFERENCE_STREAM) return `memoref-${uuidFromBytes(stored, 1)}-${stored.toString('hex', 17)}`;
  throw new Error(`unknown stream form ${stored[0]}`);
}

/** An event id that is a uuid as its 16 bytes (both the row and the id's unique index hold it). */
const packId = (id: string): string | Buffer => (UUID.test(id) ? uuidToBytes(id) : id);
const unpackId = (stored: string | Buffer): string => (typeof stored === 'string' ? stored : uuidFromBytes(stored));

/**
 * The two forms a stream name may be stored in, to bind to `IN (?, ?)`: rows written before the
 * packed forms, and rows written with `compact: false`, hold the text.
 */
const bothStreamForms = (name: string): [string | Buffer, string] => [packStream(name), name];

function toStored(row: EventRow): StoredEvent {
  const data = unpackData(row.data);
  const subject = row.subject === '' ? derivedSubject(data) : row.subject;
  if (subject === undefined) throw new Error(`event ${row.id}: its subject is derived, but its data names no memo`);
  return {
    position: row.position,
    id: unpackId(row.id),
    streamName: unpackStream(row.stream),
    version: row.version,
    type: row.type,
    data,
    meta: { ...unpackMeta(row.meta), ...(subject === null ? {} : { subject }) },
    occurredAt: row.occurred_at,
  };
}

/**
 * The embedded event store: one SQLite file (WAL), shareable by several memo processes on one
 * machine. `UNIQUE (stream, version)` is the optimistic-concurrency guard. Writes of concurrent
 * commands share a commit (`GroupCommit`); each still succeeds or fails alone. Rows are lean: a
 * sealed event's data as bytes (packData), uuids and memo stream names as bytes (packId,
 * packStream), the subject stored once. Every older form is still read.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  private readonly commits: GroupCommit;
  private readonly stmts;

  /**
   * `compact: false` writes rows as versions before lean rows did (data as JSON text, the subject
   * in meta too), for a rolling upgrade where those still share the file (`MEMEX_SEAL_DEFLATE=false`).
   * Both forms are always read.
   */
  constructor(
    pathOrDb: string | SqliteDatabase,
    private readonly options: { compact?: boolean } = {},
  ) {
    this.db = typeof pathOrDb === 'string' ? openSqlite(pathOrDb) : pathOrDb;
    this.commits = groupCommit(this.db);
    this.db.exec(SCHEMA);
    this.stmts = {
      // Reads look up each form of the name apart: one `IN (?, ?)` with its ORDER BY costs more.
      read: this.db.prepare<[string | Buffer], EventRow>('SELECT * FROM events WHERE stream = ? ORDER BY version'),
      readOne: this.db.prepare<[string | Buffer, number], EventRow>('SELECT * FROM events WHERE stream = ? AND version = ?'),
      version: this.db.prepare<[string | Buffer, string], { v: number | null }>('SELECT MAX(version) AS v FROM events WHERE stream IN (?, ?)'),
      insert: this.db.prepare(
        `INSERT INTO events (id, stream, version, type, data, meta, occurred_at, subject)
         VALUES (@id, @stream, @version, @type, @data, @meta, @occurred_at, @subject)`,
      ),
      erase: this.db.prepare<[string | Buffer, string]>('DELETE FROM events WHERE stream IN (?, ?)'),
      unpublished: this.db.prepare<[number], EventRow>(
        'SELECT * FROM events WHERE published = 0 AND subject IS NOT NULL ORDER BY position LIMIT ?',
      ),
      unpublishedBefore: this.db.prepare<[string, number], EventRow>(
        'SELECT * FROM events WHERE published = 0 AND subject IS NOT NULL AND occurred_at < ? ORDER BY position LIMIT ?',
      ),
      markPublished: this.db.prepare<[string | Buffer]>('UPDATE events SET published = 1 WHERE id = ?'),
      log: this.db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE position > ? AND subject IS NOT NULL ORDER BY position LIMIT ?'),
      // AUTOINCREMENT keeps the highest position ever handed out, also after its row was erased.
      head: this.db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'"),
    };
  }

  async readStream(streamName: string): Promise<ReadStreamResult> {
    const [packed, text] = bothStreamForms(streamName);
    let rows = this.stmts.read.all(packed);
    if (packed !== text) {
      const older = this.stmts.read.all(text);
      if (older.length > 0) rows = [...older, ...rows].sort((a, b) => a.version - b.version);
    }
    const events = rows.map(toStored);
    return { version: events.at(-1)?.version ?? 0, events };
  }

  async readEvent(streamName: string, version: number): Promise<StoredEvent | undefined> {
    const [packed, text] = bothStreamForms(streamName);
    const row = this.stmts.readOne.get(packed, version) ?? (packed !== text ? this.stmts.readOne.get(text, version) : undefined);
    return row ? toStored(row) : undefined;
  }

  private async write(streamName: string, events: readonly NewEvent[], expectedVersion: number, erase: boolean): Promise<AppendResult> {
    try {
      return await this.commits.run((): AppendResult => {
        const current = this.stmts.version.get(...bothStreamForms(streamName))?.v ?? 0;
        if (current !== expectedVersion) throw new VersionConflictError(streamName, expectedVersion);
        if (erase) this.stmts.erase.run(...bothStreamForms(streamName));
        const stored: StoredEvent[] = [];
        let version = expectedVersion;
        const compact = this.options.compact !== false;
        const stream = compact ? packStream(streamName) : streamName;
        for (const e of events) {
          version += 1;
          const info = this.stmts.insert.run({
            id: compact ? packId(e.id) : e.id,
            stream,
            version,
            type: e.type,
            data: compact ? packData(e.data) : JSON.stringify(e.data),
            meta: compact ? packMeta({ ...e.meta, subject: undefined }) : JSON.stringify(e.meta),
            occurred_at: e.occurredAt,
            subject: e.meta.subject === undefined ? null : compact && e.meta.subject === derivedSubject(e.data) ? '' : e.meta.subject,
          });
          stored.push({ ...e, streamName, version, position: Number(info.lastInsertRowid) });
        }
        return { nextVersion: version, events: stored };
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && /stream/.test(String(error))) {
        throw new VersionConflictError(streamName, expectedVersion, { cause: error });
      }
      throw error;
    }
  }

  async appendToStream(streamName: string, events: readonly NewEvent[], { expectedVersion }: { expectedVersion: number }) {
    return this.write(streamName, events, expectedVersion, false);
  }

  async eraseStream(streamName: string, tombstone: NewEvent, { expectedVersion }: { expectedVersion: number }) {
    return this.write(streamName, [tombstone], expectedVersion, true);
  }

  async readUnpublished({ limit, olderThan }: { limit: number; olderThan?: string }): Promise<StoredEvent[]> {
    const rows = olderThan ? this.stmts.unpublishedBefore.all(olderThan, limit) : this.stmts.unpublished.all(limit);
    return rows.map(toStored);
  }

  async readLog({ after, limit }: { after: number; limit: number }): Promise<StoredEvent[]> {
    return this.stmts.log.all(after, limit).map(toStored);
  }

  async headPosition(): Promise<number> {
    return this.stmts.head.get()?.seq ?? 0;
  }

  async markPublished(eventIds: readonly string[]): Promise<void> {
    await this.commits.run(() => {
      for (const id of eventIds) {
        const packed = packId(id);
        if (this.stmts.markPublished.run(packed).changes === 0 && packed !== id) this.stmts.markPublished.run(id);
      }
    });
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
