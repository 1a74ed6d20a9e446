import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

/**
 * Opens a SQLite file the way every embedded store wants it: WAL (readers never block the writer;
 * several processes may share the file), synchronous=NORMAL (durable across process crashes; a power
 * cut can lose the last transactions, as documented), and a busy timeout for multi-process writers.
 */
export interface OpenSqliteOptions {
  /**
   * Once the WAL has not changed for this long, copy it into the database and truncate it to zero
   * (0: never). Between bursts of writes a store then holds its data once, not once more in a WAL of
   * up to `journal_size_limit`.
   */
  idleCheckpointMs?: number;
  /**
   * Page size of a new database file (an existing one keeps its own). 8 KiB: rows of memos and
   * events are 1-3 KiB, so on 4 KiB pages one or two fit and a third of each page stays empty.
   */
  pageSize?: number;
}

/** WAL bytes between SQLite's automatic checkpoints (and what the WAL is cut back to after one). */
const WAL_CHECKPOINT_BYTES = 4 * 1024 * 1024;

export function openSqlite(path: string, { idleCheckpointMs = 2_000, pageSize = 8192 }: OpenSqliteOptions = {}): SqliteDatabase {
  if (path !== ':memory:') privateFile(path);
  const db = new Database(path);
  // Before WAL: a new file takes it at its first write; an existing one ignores it.
  db.pragma(`page_size = ${pageSize}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  db.pragma('foreign_keys = ON');
  // Deleted rows are overwritten with zeros, not just unlinked: a delete must erase (see docs/erasure.md).
  db.pragma('secure_delete = ON');
  // Checkpoint every ~4 MiB of WAL (SQLite's default) and cut the file back to 4 MiB after each: the
  // WAL stays small beside the data, at one fsync per checkpoint. Once writes pause, the WAL is
  // truncated to nothing (`idleCheckpointMs`).
  const pageBytes = db.pragma('page_size', { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.round(WAL_CHECKPOINT_BYTES / pageBytes))}`);
  db.pragma(`journal_size_limit = ${WAL_CHECKPOINT_BYTES}`);
  if (path !== ':memory:' && idleCheckpointMs > 0) truncateWalWhenIdle(db, `${path}-wal`, idleCheckpointMs);
  return db;
}

/**
 * Checks the WAL file every `everyMs`; when its size and mtime are what they were at the previous
 * check (no commit in between, from this process or another), checkpoints it with TRUNCATE. The
 * checkpoint runs with no busy timeout, so a reader or writer in another process makes it give way
 * at once (it is retried at the next idle check) instead of stalling this process's event loop.
 */
function truncateWalWhenIdle(db: SqliteDatabase, walPath: string, everyMs: number): void {
  let last = '';
  const timer = setInterval(() => {
    if (!db.open) {
      clearInterval(timer);
      return;
    }
    let seen: string;
    try {
      const stat = statSync(walPath);
      if (stat.size === 0) return;
      seen = `${stat.size}:${stat.mtimeMs}`;
    } catch {
      return; // no WAL (yet)
    }
    if (seen !== last) {
      last = seen;
      return;
    }
    last = '';
    truncateWal(db); // busy: the next idle check tries again
  }, everyMs);
  timer.unref();
}

/**
 * Copies the WAL into the database and truncates it, without waiting: with the connection's busy
 * timeout (10 s) a reader in another process would stall this process's event loop that long.
 */
function truncateWal(db: SqliteDatabase): { busy: boolean } {
  const timeout = db.pragma('busy_timeout', { simple: true }) as number;
  try {
    db.pragma('busy_timeout = 0');
    const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return { busy: (row?.busy ?? 0) !== 0 };
  } catch {
    return { busy: true };
  } finally {
    if (db.open) db.pragma(`busy_timeout = ${timeout}`);
  }
}

interface QueuedWrite {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type TransactionRunner = Database.Transaction<(fn: () => unknown) => unknown>;
const transactionRunners = new WeakMap<SqliteDatabase, TransactionRunner>();

/**
 * Runs `fn` in a transaction of `db`, or in a savepoint when one is open (what better-sqlite3's
 * `db.transaction(fn)()` does, and `.immediate()` with `immediate`: BEGIN IMMEDIATE), through one
 * wrapper per connection: `db.transaction(fn)` builds four wrapper functions and defines five
 * properties on each at every call, a cost on every write.
 */
export function inTransaction<T>(db: SqliteDatabase, fn: () => T, { immediate = false }: { immediate?: boolean } = {}): T {
  let runner = transactionRunners.get(db);
  if (!runner) transactionRunners.set(db, (runner = db.transaction((body: () => unknown) => body())));
  return (immediate ? runner.immediate(fn) : runner(fn)) as T;
}

/**
 * Group commit: writes queued in one turn of the event loop share one transaction, so N concurrent
 * requests cost one commit instead of N. Each write runs in its own savepoint inside it: one that
 * throws rolls back alone and rejects alone; the others commit. A write's promise resolves only
 * after the shared commit, so whatever it reports is on disk (as durable as a transaction of its own).
 */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private scheduled = false;

  constructor(private readonly db: SqliteDatabase) {}

  /** Runs `fn` (synchronous, as a better-sqlite3 transaction body) in the next shared transaction. */
  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      inTransaction(
        this.db,
        () => {
          for (const write of batch) {
            try {
              // Nested: a savepoint of the shared transaction.
              outcomes.push({ ok: true, value: inTransaction(this.db, write.fn) });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        },
        { immediate: true },
      );
    } catch (error) {
      // Nothing committed (BEGIN or COMMIT failed): every write fails.
      for (const write of batch) write.reject(error);
      return;
    }
    for (const [i, write] of batch.entries()) {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    }
  }
}

const groupCommits = new WeakMap<SqliteDatabase, GroupCommit>();

/** The one `GroupCommit` of a connection, shared by every store that writes through it. */
export function groupCommit(db: SqliteDatabase): GroupCommit {
  let commits = groupCommits.get(db);
  if (!commits) groupCommits.set(db, (commits = new GroupCommit(db)));
  return commits;
}

/**
 * After an erasure: copies the WAL into the database and truncates it, so the erased rows' earlier
 * page images (still in WAL frames) are gone from disk too. Another process reading at that moment
 * can keep the WAL from being reset; the next call, the idle truncation or SQLite's own checkpoint
 * finishes the job.
 */
export function checkpointAfterErase(db: SqliteDatabase): { busy: boolean } {
  if (!db.open || db.memory) return { busy: false };
  return truncateWal(db);
}

/**
 * The file (and its directory) readable by the owner alone, made so before SQLite opens it: SQLite
 * gives the -wal and -shm files the database file's mode, so they are private too. Files an older
 * version made world-readable are tightened.
 */
function privateFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
  for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
}
