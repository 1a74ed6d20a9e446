import type { Collection, Db, Filter, MongoClient } from 'mongodb';
import { connectMongo, isDuplicateKeyError, isMongoServerError } from '@memex/runtime';
import {
  VersionConflictError,
  type AppendResult,
  type EventStore,
  type NewEvent,
  type ReadStreamResult,
  type StoredEvent,
  type StreamAppend,
  type StreamAppendResult,
} from './port';

/** An append carried an event id the store already holds; ids are unique across all streams. */
class DuplicateEventIdError extends Error {
  constructor(
    readonly streamName: string,
    options?: { cause?: unknown },
  ) {
    super(`Duplicate event id in an append to ${streamName}`, options);
    this.name = 'DuplicateEventIdError';
  }
}

interface EventEntry {
  id: string;
  type: string;
  // JSON text, not BSON: payloads carry user metadata whose keys may start with '$' or hold dots.
  data: string;
  meta: string;
  occurredAt: string;
}

/**
 * One `appendToStream` call. A single-document insert is atomic, so a commit is all of its events
 * or none of them, whatever happens to the process.
 */
interface CommitDoc {
  stream: string;
  /** The first event's version; unique per stream. */
  version: number;
  lastVersion: number;
  /** The first event's position; the others follow one by one. */
  position: number;
  /** Removed when a later tombstone erases the commit; the husk keeps its version taken. */
  events?: EventEntry[];
  /** Ids of events with a subject not yet published; absent once there are none. */
  unpublished?: string[];
  /** The earliest `occurredAt` among `unpublished` at append time (lets the sweep skip fresh commits). */
  unpublishedSince?: string;
  tombstone?: true;
}

interface CounterDoc {
  _id: string;
  value: number;
}

const STREAM_VERSION_INDEX = 'stream_version';
const EVENT_ID_INDEX = 'event_id';
const POSITION_COUNTER = 'event_position';

/** Which unique index an E11000 hit, or undefined for any other error. */
function duplicateKeyIndex(error: unknown): string | undefined {
  if (!isDuplicateKeyError(error)) return undefined;
  const pattern: unknown = error.keyPattern;
  if (pattern && typeof pattern === 'object') {
    if ('events.id' in pattern) return EVENT_ID_INDEX;
    if ('stream' in pattern && 'version' in pattern) return STREAM_VERSION_INDEX;
  }
  return /index: (\S+)/.exec(error.message)?.[1] ?? 'unknown';
}

/** The commit document of one append whose first event gets `position`. */
function commitDoc(streamName: string, events: readonly NewEvent[], expectedVersion: number, position: number, tombstone: boolean): CommitDoc {
  const published = events.filter((e) => e.meta.subject);
  return {
    stream: streamName,
    version: expectedVersion + 1,
    lastVersion: expectedVersion + events.length,
    position,
    events: events.map((e) => ({
      id: e.id,
      type: e.type,
      data: JSON.stringify(e.data ?? null),
      meta: JSON.stringify(e.meta),
      occurredAt: e.occurredAt,
    })),
    ...(published.length > 0 ? { unpublished: published.map((e) => e.id), unpublishedSince: published.map((e) => e.occurredAt).sort()[0] } : {}),
    ...(tombstone ? { tombstone: true as const } : {}),
  };
}

function storedEvents(commit: CommitDoc): StoredEvent[] {
  return (commit.events ?? []).map((e, i) => ({
    id: e.id,
    type: e.type,
    data: JSON.parse(e.data) as unknown,
    meta: JSON.parse(e.meta) as StoredEvent['meta'],
    occurredAt: e.occurredAt,
    streamName: commit.stream,
    version: commit.version + i,
    position: commit.position + i,
  }));
}

/**
 * The event store in MongoDB, one document per commit in `event_commits`.
 *
 * No transactions: an append is one insert (no retry loop for transient transaction errors, and it
 * runs on a standalone server as well as a replica set). The version guard is
 * a unique index on `(stream, version)`, where `version` is the commit's first event: a writer
 * appends at `expectedVersion + 1` only after reading that the stream's last commit ends at
 * `expectedVersion`. Commits are whole documents, so whatever a writer read was some commit's
 * `lastVersion`; the slot after it is either free or the start of the commit that beat the writer,
 * and the index turns the second case into `VersionConflictError`.
 *
 * Positions come from a counter document (`$inc` by the number of events, majority-acknowledged),
 * taken after the version check: unique and increasing in the order they are handed out, with gaps
 * for appends that lost, and within one stream in version order. Across streams a commit may become
 * visible after one with a higher position, so they order the outbox, nothing stronger.
 *
 * Erasure inserts the tombstone commit under the same guard, then strips the events from every
 * earlier commit of the stream, leaving husks that keep their versions taken so a writer holding a
 * stale version still collides. Until the strip is done (a crash in between), readers skip every
 * commit below the latest tombstone and finish the strip when they meet one. (The server's oplog
 * keeps the original inserts until it rolls over; nothing here can reach them.)
 */
export class MongoEventStore implements EventStore {
  readonly kind = 'mongodb' as const;
  private readonly commits: Collection<CommitDoc>;
  private readonly counters: Collection<CounterDoc>;
  private readonly indexed: Promise<void>;

  /** Connects with majority writes and reads; `close()` then closes the client too. */
  static async open(url: string, dbName: string): Promise<MongoEventStore> {
    const client = await connectMongo(url);
    const store = new MongoEventStore(client.db(dbName), client);
    try {
      await store.ready();
    } catch (error) {
      await client.close();
      throw error;
    }
    return store;
  }

  /** `ownedClient` is closed by `close()`; without one the caller owns the connection. */
  constructor(
    db: Db,
    private readonly ownedClient?: MongoClient,
  ) {
    this.commits = db.collection<CommitDoc>('event_commits');
    this.counters = db.collection<CounterDoc>('counters');
    this.indexed = this.createIndexes();
    // Every operation awaits this; the handler only keeps an early failure from going unhandled.
    this.indexed.catch(() => undefined);
  }

  /** Resolves once the indexes exist (created on construction; idempotent). */
  ready(): Promise<void> {
    return this.indexed;
  }

  private async createIndexes(): Promise<void> {
    await this.commits.createIndexes([
      { key: { stream: 1, version: 1 }, name: STREAM_VERSION_INDEX, unique: true },
      // Husks have no events; the partial filter keeps them out of a unique index.
      { key: { 'events.id': 1 }, name: EVENT_ID_INDEX, unique: true, partialFilterExpression: { events: { $exists: true } } },
      { key: { position: 1 }, name: 'outbox_position', partialFilterExpression: { unpublished: { $exists: true } } },
      { key: { unpublished: 1 }, name: 'outbox_ids', partialFilterExpression: { unpublished: { $exists: true } } },
      // For readLog. Not `{ position: 1 }` alone: the outbox's partial index has that key, and a server
      // before 5.0 refuses two indexes on one key pattern.
      { key: { position: 1, stream: 1 }, name: 'log_position' },
    ]);
    try {
      await this.counters.updateOne({ _id: POSITION_COUNTER }, { $setOnInsert: { value: 0 } }, { upsert: true });
    } catch (error) {
      // Another process created it first.
      if (duplicateKeyIndex(error) === undefined) throw error;
    }
  }

  async readStream(streamName: string): Promise<ReadStreamResult> {
    await this.indexed;
    const commits = await this.commits.find({ stream: streamName }, { sort: { version: 1 } }).toArray();
    const head = commits.at(-1);
    if (!head) return { version: 0, events: [] };
    const tombstoneAt = commits.findLastIndex((c) => c.tombstone);
    const live = tombstoneAt < 0 ? commits : commits.slice(tombstoneAt);
    if (tombstoneAt > 0 && commits.slice(0, tombstoneAt).some((c) => c.events)) {
      await this.stripBelow(streamName, commits[tombstoneAt]!.version);
    }
    return { version: head.lastVersion, events: live.flatMap(storedEvents) };
  }

  /** Through `readStream`: a stream is a few commits, and it skips what a tombstone erased. */
  async readEvent(streamName: string, version: number): Promise<StoredEvent | undefined> {
    return (await this.readStream(streamName)).events.find((e) => e.version === version);
  }

  async appendToStream(streamName: string, events: readonly NewEvent[], { expectedVersion }: { expectedVersion: number }): Promise<AppendResult> {
    return this.commit(streamName, events, expectedVersion, false);
  }

  async eraseStream(streamName: string, tombstone: NewEvent, { expectedVersion }: { expectedVersion: number }): Promise<AppendResult> {
    const result = await this.commit(streamName, [tombstone], expectedVersion, true);
    await this.stripBelow(streamName, expectedVersion + 1);
    return result;
  }

  private async commit(streamName: string, events: readonly NewEvent[], expectedVersion: number, tombstone: boolean): Promise<AppendResult> {
    await this.indexed;
    // The unique index only sees ids across commits, not twice within one.
    if (new Set(events.map((e) => e.id)).size !== events.length) throw new DuplicateEventIdError(streamName);
    const head = await this.commits.findOne({ stream: streamName }, { sort: { version: -1 }, projection: { lastVersion: 1 } });
    if ((head?.lastVersion ?? 0) !== expectedVersion) throw new VersionConflictError(streamName, expectedVersion);
    if (events.length === 0) return { nextVersion: expectedVersion, events: [] };

    const doc = commitDoc(streamName, events, expectedVersion, await this.allocatePositions(events.length), tombstone);
    try {
      // insertOne copies an _id into the object it is given; keep `doc` ours.
      await this.commits.insertOne({ ...doc });
    } catch (error) {
      const index = duplicateKeyIndex(error);
      if (index === STREAM_VERSION_INDEX) throw new VersionConflictError(streamName, expectedVersion, { cause: error });
      if (index === EVENT_ID_INDEX) throw new DuplicateEventIdError(streamName, { cause: error });
      throw error;
    }
    return { nextVersion: doc.lastVersion, events: storedEvents(doc) };
  }

  /**
   * One commit document per append, written by one unordered `insertMany` (positions from one
   * counter update): each document is atomic alone, and one that loses its version race fails alone.
   */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<StreamAppendResult[]> {
    await this.indexed;
    for (const a of appends) if (new Set(a.events.map((e) => e.id)).size !== a.events.length) throw new DuplicateEventIdError(a.streamName);
    const heads = await Promise.all(
      appends.map((a) => this.commits.findOne({ stream: a.streamName }, { sort: { version: -1 }, projection: { lastVersion: 1 } })),
    );
    const results: StreamAppendResult[] = appends.map((a, i) =>
      (heads[i]?.lastVersion ?? 0) !== a.expectedVersion ? new VersionConflictError(a.streamName, a.expectedVersion) : { nextVersion: a.expectedVersion, events: [] },
    );
    const writing = appends.flatMap((a, i) => (results[i] instanceof VersionConflictError || a.events.length === 0 ? [] : [i]));
    if (writing.length === 0) return results;
    let position = await this.allocatePositions(writing.reduce((n, i) => n + appends[i]!.events.length, 0));
    const docs = writing.map((i) => {
      const a = appends[i]!;
      const doc = commitDoc(a.streamName, a.events, a.expectedVersion, position, false);
      position += a.events.length;
      return doc;
    });
    const failed = new Map<number, unknown>();
    try {
      await this.commits.insertMany(docs.map((d) => ({ ...d })), { ordered: false });
    } catch (error) {
      // A MongoBulkWriteError, told by name: the driver is not imported at the top of a module.
      const bulk = isMongoServerError(error) ? (error as { writeErrors?: unknown }).writeErrors : undefined;
      if (bulk === undefined) throw error;
      const writeErrors = (Array.isArray(bulk) ? bulk : [bulk]) as { index: number }[];
      for (const w of writeErrors) failed.set(w.index, w);
      if (failed.size === 0) throw error;
    }
    docs.forEach((doc, j) => {
      const i = writing[j]!;
      const error = failed.get(j) as { code?: number; errmsg?: string } | undefined;
      if (error === undefined) results[i] = { nextVersion: doc.lastVersion, events: storedEvents(doc) };
      else if (error.code === 11000 && error.errmsg?.includes(STREAM_VERSION_INDEX)) results[i] = new VersionConflictError(doc.stream, doc.version - 1, { cause: error });
      else if (error.code === 11000 && error.errmsg?.includes(EVENT_ID_INDEX)) throw new DuplicateEventIdError(doc.stream, { cause: error });
      else throw new Error(`append to ${doc.stream} failed: ${error.errmsg ?? error.code}`, { cause: error });
    });
    return results;
  }

  /** Reserves `count` consecutive positions; returns the first. */
  private async allocatePositions(count: number): Promise<number> {
    const counter = await this.counters.findOneAndUpdate(
      { _id: POSITION_COUNTER },
      { $inc: { value: count } },
      { upsert: true, returnDocument: 'after' },
    );
    if (!counter) throw new Error('event position counter missing after upsert');
    return counter.value - count + 1;
  }

  /** Finishes an erasure: earlier commits keep only their version range. Idempotent. */
  private async stripBelow(streamName: string, tombstoneVersion: number): Promise<void> {
    await this.commits.updateMany(
      { stream: streamName, version: { $lt: tombstoneVersion }, events: { $exists: true } },
      { $unset: { events: '', unpublished: '', unpublishedSince: '' } },
    );
  }

  async readUnpublished({ limit, olderThan }: { limit: number; olderThan?: string }): Promise<StoredEvent[]> {
    await this.indexed;
    const out: StoredEvent[] = [];
    const pageSize = Math.min(Math.max(limit, 1), 500);
    let after: number | undefined;
    while (out.length < limit) {
      const query: Filter<CommitDoc> = { unpublished: { $exists: true } };
      if (after !== undefined) query.position = { $gt: after };
      if (olderThan !== undefined) query.unpublishedSince = { $lt: olderThan };
      const page = await this.commits.find(query, { sort: { position: 1 }, limit: pageSize }).toArray();
      const tombstones = await this.latestTombstones([...new Set(page.map((c) => c.stream))]);
      for (const commit of page) {
        const erasedBelow = tombstones.get(commit.stream);
        if (erasedBelow !== undefined && commit.version < erasedBelow) {
          // An erasure that did not finish; its earlier events must not leave the store.
          await this.stripBelow(commit.stream, erasedBelow);
          continue;
        }
        const pending = new Set(commit.unpublished);
        for (const event of storedEvents(commit)) {
          if (!pending.has(event.id) || (olderThan !== undefined && !(event.occurredAt < olderThan))) continue;
          out.push(event);
          if (out.length >= limit) return out;
        }
      }
      if (page.length < pageSize) break;
      after = page.at(-1)?.position;
    }
    return out;
  }

  async readLog({ after, limit }: { after: number; limit: number }): Promise<StoredEvent[]> {
    await this.indexed;
    const out: StoredEvent[] = [];
    /** Takes the page's events after `after`; true once `limit` is reached. */
    const take = async (page: readonly CommitDoc[]): Promise<boolean> => {
      const tombstones = await this.latestTombstones([...new Set(page.map((c) => c.stream))]);
      for (const commit of page) {
        const erasedBelow = tombstones.get(commit.stream);
        if (erasedBelow !== undefined && commit.version < erasedBelow) {
          // An erasure that did not finish; its earlier events must not leave the store.
          if (commit.events) await this.stripBelow(commit.stream, erasedBelow);
          continue;
        }
        for (const event of storedEvents(commit)) {
          if (event.position <= after || !event.meta.subject) continue;
          out.push(event);
          if (out.length >= limit) return true;
        }
      }
      return false;
    };
    if (limit < 1) return out;
    // The commit holding position `after` may hold later events too; then come the commits after it.
    const holding = await this.commits.findOne({ position: { $lte: after } }, { sort: { position: -1 } });
    if (holding && (await take([holding]))) return out;
    const pageSize = Math.min(limit, 500);
    for (let from = after; ; ) {
      const page = await this.commits.find({ position: { $gt: from } }, { sort: { position: 1 }, limit: pageSize }).toArray();
      if ((await take(page)) || page.length < pageSize) return out;
      from = page.at(-1)!.position;
    }
  }

  async headPosition(): Promise<number> {
    await this.indexed;
    return (await this.counters.findOne({ _id: POSITION_COUNTER }))?.value ?? 0;
  }

  /** The version of each stream's latest tombstone, for those streams that have one. */
  private async latestTombstones(streams: readonly string[]): Promise<Map<string, number>> {
    const latest = new Map<string, number>();
    if (streams.length === 0) return latest;
    const tombstones = this.commits.find({ stream: { $in: [...streams] }, tombstone: true }, { projection: { stream: 1, version: 1 } });
    for await (const t of tombstones) latest.set(t.stream, Math.max(t.version, latest.get(t.stream) ?? 0));
    return latest;
  }

  async markPublished(eventIds: readonly string[]): Promise<void> {
    await this.indexed;
    if (eventIds.length === 0) return;
    const ids = [...new Set(eventIds)];
    // One pipeline update per commit: drop the ids, and the field itself once it is empty, so the
    // partial outbox indexes only hold commits with work left.
    await this.commits.updateMany({ unpublished: { $exists: true, $in: ids } }, [
      {
        $set: {
          unpublished: {
            $let: {
              vars: { left: { $filter: { input: '$unpublished', as: 'id', cond: { $not: [{ $in: ['$$id', { $literal: ids }] }] } } } },
              in: { $cond: [{ $eq: [{ $size: '$$left' }, 0] }, '$$REMOVE', '$$left'] },
            },
          },
        },
      },
    ]);
  }

  async close(): Promise<void> {
    await this.ownedClient?.close();
  }
}
