import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

/**
 * Opens a SQLite file the way every embedded store wants it: WAL (readers never block the writer;
 * several processes may share the file), synchronous=NORMAL (durable across process crashes; a power
 * cut can lose the last transactions, as documented), and a busy timeout for multi-process writers.
 */
export function openSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  db.pragma('foreign_keys = ON');
  // Fewer, larger checkpoints: each one is a latency spike for the writer.
  db.pragma('wal_autocheckpoint = 10000');
  return db;
}
