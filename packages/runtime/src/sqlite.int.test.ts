import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { eventually, tempDir } from '@memex/testing';
import { groupCommit, inTransaction, openSqlite } from './sqlite';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('openSqlite', () => {
  it('makes the database, its -wal and -shm files 0600 and a new directory 0700, whatever the umask', () => {
    const dir = tempDir('memex-sqlite-');
    const old = process.umask(0o022);
    try {
      const path = join(dir.path, 'store', 'x.db');
      const db = openSqlite(path);
      db.exec('CREATE TABLE t (v TEXT); INSERT INTO t VALUES (\'secret\')');
      expect(mode(join(dir.path, 'store'))).toBe(0o700);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(mode(file), file).toBe(0o600);
      db.close();
    } finally {
      process.umask(old);
      dir.remove();
    }
  });

  it('tightens a world-readable file an older version made', () => {
    const dir = tempDir('memex-sqlite-');
    try {
      const path = join(dir.path, 'old.db');
      writeFileSync(path, '');
      chmodSync(path, 0o644);
      openSqlite(path).close();
      expect(mode(path)).toBe(0o600);
    } finally {
      dir.remove();
    }
  });
});

describe('page size', () => {
  it('gives a new file 8 KiB pages and leaves an existing file its own, checkpointing every ~4 MiB of WAL either way', () => {
    const dir = tempDir('memex-sqlite-');
    try {
      const fresh = openSqlite(join(dir.path, 'new.db'));
      fresh.exec('CREATE TABLE t (v TEXT)');
      expect(fresh.pragma('page_size', { simple: true })).toBe(8192);
      expect(fresh.pragma('wal_autocheckpoint', { simple: true })).toBe(512);
      fresh.close();

      const path = join(dir.path, 'old.db');
      const older = new Database(path);
      older.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept')");
      older.close();
      const reopened = openSqlite(path);
      expect(reopened.pragma('page_size', { simple: true })).toBe(4096);
      expect(reopened.pragma('wal_autocheckpoint', { simple: true })).toBe(1024);
      expect(reopened.prepare('SELECT v FROM t').pluck().get()).toBe('kept');
      reopened.close();
    } finally {
      dir.remove();
    }
  });
});

describe('idle WAL truncation', () => {
  const walSize = (path: string) => statSync(`${path}-wal`).size;
  const fill = (db: ReturnType<typeof openSqlite>) => {
    db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 200; i++) insert.run('x'.repeat(1000));
    })();
  };

  it('truncates the WAL to nothing once writes pause, keeping every row', async () => {
    const dir = tempDir('memex-sqlite-');
    try {
      const path = join(dir.path, 'idle.db');
      const db = openSqlite(path, { idleCheckpointMs: 30 });
      fill(db);
      expect(walSize(path)).toBeGreaterThan(100_000);
      await eventually(() => walSize(path) === 0, 5_000, 20);
      db.close();
      const reopened = new Database(path, { readonly: true });
      expect(reopened.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 200 });
      reopened.close();
    } finally {
      dir.remove();
    }
  });

  it('leaves the WAL alone when turned off', async () => {
    const dir = tempDir('memex-sqlite-');
    try {
      const path = join(dir.path, 'off.db');
      const db = openSqlite(path, { idleCheckpointMs: 0 });
      fill(db);
      const size = walSize(path);
      await new Promise((r) => setTimeout(r, 200));
      expect(walSize(path)).toBe(size);
      db.close();
    } finally {
      dir.remove();
    }
  });

  it('gives way to a reader of another connection without stalling, and truncates after it ends', async () => {
    const dir = tempDir('memex-sqlite-');
    try {
      const path = join(dir.path, 'shared.db');
      const db = openSqlite(path, { idleCheckpointMs: 30 });
      fill(db);
      const reader = new Database(path);
      reader.exec('BEGIN');
      reader.prepare('SELECT COUNT(*) FROM t').get(); // holds a read snapshot on the WAL
      let gap = 0;
      let last = Date.now();
      const ticks = setInterval(() => {
        gap = Math.max(gap, Date.now() - last);
        last = Date.now();
      }, 10);
      await new Promise((r) => setTimeout(r, 400));
      clearInterval(ticks);
      expect(walSize(path)).toBeGreaterThan(0);
      // busy_timeout is 10 s: had the checkpoint waited on the reader, the loop would have stalled.
      expect(gap).toBeLessThan(300);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(10_000);
      reader.exec('COMMIT');
      await eventually(() => walSize(path) === 0, 5_000, 20);
      reader.close();
      db.close();
    } finally {
      dir.remove();
    }
  });
});

describe('inTransaction', () => {
  it('commits what fn did, or rolls all of it back and rethrows; inside another, only its own (a savepoint)', () => {
    const dir = tempDir('memex-sqlite-');
    const db = openSqlite(join(dir.path, 't.db'));
    try {
      db.exec('CREATE TABLE t (v TEXT UNIQUE)');
      const insert = db.prepare<[string]>('INSERT INTO t (v) VALUES (?)');
      const rows = () => db.prepare<[], { v: string }>('SELECT v FROM t ORDER BY v').all().map((r) => r.v);
      expect(inTransaction(db, () => insert.run('a').changes)).toBe(1);
      expect(() => inTransaction(db, () => (insert.run('b'), insert.run('a')))).toThrow(/UNIQUE/);
      expect(rows()).toEqual(['a']);
      expect(db.inTransaction).toBe(false);
      inTransaction(db, () => {
        insert.run('c');
        expect(() => inTransaction(db, () => (insert.run('d'), insert.run('a')))).toThrow(/UNIQUE/);
        expect(db.inTransaction).toBe(true);
        insert.run('e');
      });
      expect(rows()).toEqual(['a', 'c', 'e']);
    } finally {
      db.close();
      dir.remove();
    }
  });

  it('takes the write lock at the start with immediate, not at the first write without', () => {
    const dir = tempDir('memex-sqlite-');
    const path = join(dir.path, 't.db');
    const db = openSqlite(path);
    const other = openSqlite(path);
    try {
      db.exec('CREATE TABLE t (v TEXT)');
      other.pragma('busy_timeout = 0');
      const otherWrites = () => other.prepare('INSERT INTO t (v) VALUES (?)').run('other').changes;
      expect(inTransaction(db, otherWrites)).toBe(1);
      expect(() => inTransaction(db, otherWrites, { immediate: true })).toThrow(/locked|busy/i);
    } finally {
      db.close();
      other.close();
      dir.remove();
    }
  });
});

describe('GroupCommit', () => {
  const open = () => {
    const dir = tempDir('memex-sqlite-');
    const path = join(dir.path, 'g.db');
    const db = openSqlite(path);
    db.exec('CREATE TABLE t (v TEXT UNIQUE)');
    // Another connection, as another process sharing the file would have.
    const other = openSqlite(path);
    const commits = () => other.pragma('data_version', { simple: true }) as number;
    const rows = () => other.prepare<[], { v: string }>('SELECT v FROM t ORDER BY v').all().map((r) => r.v);
    return { db, commits, rows, close: () => (db.close(), other.close(), dir.remove()) };
  };

  it('commits the writes queued together once, and each is on disk when its promise resolves', async () => {
    const { db, commits, rows, close } = open();
    try {
      const insert = db.prepare<[string]>('INSERT INTO t (v) VALUES (?)');
      const before = commits();
      const group = groupCommit(db);
      const values = Array.from({ length: 20 }, (_, i) => `v${String(i).padStart(2, '0')}`);
      const results = await Promise.all(values.map((v) => group.run(() => insert.run(v).changes).then((n) => ({ n, seen: rows().includes(v) }))));
      expect(results.every((r) => r.n === 1 && r.seen)).toBe(true);
      expect(commits() - before).toBe(1);
      expect(rows()).toEqual(values);
      expect(groupCommit(db)).toBe(group);
    } finally {
      close();
    }
  });

  it('rolls back and rejects a failing write alone; the others of its group commit', async () => {
    const { db, rows, close } = open();
    try {
      const insert = db.prepare<[string]>('INSERT INTO t (v) VALUES (?)');
      const group = groupCommit(db);
      const outcomes = await Promise.allSettled([
        group.run(() => insert.run('a')),
        group.run(() => {
          insert.run('half-done');
          insert.run('a'); // UNIQUE: this write fails after a first insert, which must not stay
        }),
        group.run(() => insert.run('b')),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
      expect(rows()).toEqual(['a', 'b']);
    } finally {
      close();
    }
  });
});
