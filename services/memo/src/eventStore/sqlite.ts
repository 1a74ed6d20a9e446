import { groupCommit, openSqlite, type GroupCommit, type SqliteDatabase } from '@memex/runtime';
import { VersionConflictError, type AppendResult, type EventStore, type NewEvent, type ReadStreamResult, type StoredEvent, type StreamAppend } from './port';
import { bothStreamForms, fromRow, packId, toRow, type EventRow } from './sqliteRows';

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
 * The embedded event store: one SQLite file (WAL), shareable by several memo processes on one
 * machine. `UNIQUE (stream, version)` is the optimistic-concurrency guard. Writes of concurrent
 * commands share a commit (`GroupCommit`); each still succeeds or fails alone. What a row holds,
 * in which form, is sqliteRows' concern (`toRow` writes, `fromRow` reads every form).
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  private readonly commits: GroupCommit;
  private readonly stmts;

  /** `compact: false` writes the whole form (see sqliteRows and formats.ts); every form is read. */
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
    const events = rows.map(fromRow);
    return { version: events.at(-1)?.version ?? 0, events };
  }

  async readEvent(streamName: string, version: number): Promise<StoredEvent | undefined> {
    const [packed, text] = bothStreamForms(streamName);
    const row = this.stmts.readOne.get(packed, version) ?? (packed !== text ? this.stmts.readOne.get(text, version) : undefined);
    return row ? fromRow(row) : undefined;
  }

  /** Writes one stream's events inside the caller's transaction; throws `VersionConflictError` on a stale guard. */
  private writeNow(streamName: string, events: readonly NewEvent[], expectedVersion: number, erase: boolean): AppendResult {
    const current = this.stmts.version.get(...bothStreamForms(streamName))?.v ?? 0;
    if (current !== expectedVersion) throw new VersionConflictError(streamName, expectedVersion);
    if (erase) this.stmts.erase.run(...bothStreamForms(streamName));
    const stored: StoredEvent[] = [];
    let version = expectedVersion;
    const compact = this.options.compact !== false;
    for (const e of events) {
      version += 1;
      try {
        const info = this.stmts.insert.run(toRow(e, streamName, version, { compact }));
        stored.push({ ...e, streamName, version, position: Number(info.lastInsertRowid) });
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && /stream/.test(String(error))) {
          throw new VersionConflictError(streamName, expectedVersion, { cause: error });
        }
        throw error;
      }
    }
    return { nextVersion: version, events: stored };
  }

  private async write(streamName: string, events: readonly NewEvent[], expectedVersion: number, erase: boolean): Promise<AppendResult> {
    return this.commits.run(() => this.writeNow(streamName, events, expectedVersion, erase));
  }

  /** One savepoint of the shared commit: a conflict on any stream rolls back every stream's rows. */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (new Set(appends.map((a) => a.streamName)).size !== appends.length) throw new Error('appendMany takes each stream once');
    if (appends.length === 0) return [];
    return this.commits.run(() => appends.map((a) => this.writeNow(a.streamName, a.events, a.expectedVersion, false)));
  }

  async appendToStream(streamName: string, events: readonly NewEvent[], { expectedVersion }: { expectedVersion: number }) {
    return this.write(streamName, events, expectedVersion, false);
  }

  async eraseStream(streamName: string, tombstone: NewEvent, { expectedVersion }: { expectedVersion: number }) {
    return this.write(streamName, [tombstone], expectedVersion, true);
  }

  async readUnpublished({ limit, olderThan }: { limit: number; olderThan?: string }): Promise<StoredEvent[]> {
    const rows = olderThan ? this.stmts.unpublishedBefore.all(olderThan, limit) : this.stmts.unpublished.all(limit);
    return rows.map(fromRow);
  }

  async readLog({ after, limit }: { after: number; limit: number }): Promise<StoredEvent[]> {
    return this.stmts.log.all(after, limit).map(fromRow);
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
