import { compressText, decompressText, groupCommit, openSqlite, uuidFromBytes, uuidToBytes, type GroupCommit, type SqliteDatabase } from '@memex/runtime';
import { isSubjectToken, Subjects } from '@memex/contracts';
import { VersionConflictError, type AppendResult, type EventMeta, type EventStore, type NewEvent, type ReadStreamResult, type StoredEvent } from './port';

interface EventRow {
  position: number;
  id: string;
  stream: string;
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
  id          TEXT NOT NULL UNIQUE,
  stream      TEXT NOT NULL,
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

function toStored(row: EventRow): StoredEvent {
  const data = unpackData(row.data);
  const subject = row.subject === '' ? derivedSubject(data) : row.subject;
  if (subject === undefined) throw new Error(`event ${row.id}: its subject is derived, but its data names no memo`);
  return {
    position: row.position,
    id: row.id,
    streamName: row.stream,
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
 * commands share a commit (`GroupCommit`); each still succeeds or fails alone. Rows are lean: `data`
 * deflated when that is smaller (a sealed box's base64 shrinks by a fifth), the subject stored once.
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
      read: this.db.prepare<[string], EventRow>('SELECT * FROM events WHERE stream = ? ORDER BY version'),
      readOne: this.db.prepare<[string, number], EventRow>('SELECT * FROM events WHERE stream = ? AND version = ?'),
      version: this.db.prepare<[string], { v: number | null }>('SELECT MAX(version) AS v FROM events WHERE stream = ?'),
      insert: this.db.prepare(
        `INSERT INTO events (id, stream, version, type, data, meta, occurred_at, subject)
         VALUES (@id, @stream, @version, @type, @data, @meta, @occurred_at, @subject)`,
      ),
      erase: this.db.prepare<[string]>('DELETE FROM events WHERE stream = ?'),
      unpublished: this.db.prepare<[number], EventRow>(
        'SELECT * FROM events WHERE published = 0 AND subject IS NOT NULL ORDER BY position LIMIT ?',
      ),
      unpublishedBefore: this.db.prepare<[string, number], EventRow>(
        'SELECT * FROM events WHERE published = 0 AND subject IS NOT NULL AND occurred_at < ? ORDER BY position LIMIT ?',
      ),
      markPublished: this.db.prepare<[string]>('UPDATE events SET published = 1 WHERE id = ?'),
      log: this.db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE position > ? AND subject IS NOT NULL ORDER BY position LIMIT ?'),
      // AUTOINCREMENT keeps the highest position ever handed out, also after its row was erased.
      head: this.db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'"),
    };
  }

  async readStream(streamName: string): Promise<ReadStreamResult> {
    const events = this.stmts.read.all(streamName).map(toStored);
    return { version: events.at(-1)?.version ?? 0, events };
  }

  async readEvent(streamName: string, version: number): Promise<StoredEvent | undefined> {
    const row = this.stmts.readOne.get(streamName, version);
    return row ? toStored(row) : undefined;
  }

  private async write(streamName: string, events: readonly NewEvent[], expectedVersion: number, erase: boolean): Promise<AppendResult> {
    try {
      return await this.commits.run((): AppendResult => {
        const current = this.stmts.version.get(streamName)?.v ?? 0;
        if (current !== expectedVersion) throw new VersionConflictError(streamName, expectedVersion);
        if (erase) this.stmts.erase.run(streamName);
        const stored: StoredEvent[] = [];
        let version = expectedVersion;
        const compact = this.options.compact !== false;
        for (const e of events) {
          version += 1;
          const info = this.stmts.insert.run({
            id: e.id,
            stream: streamName,
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
      for (const id of eventIds) this.stmts.markPublished.run(id);
    });
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
