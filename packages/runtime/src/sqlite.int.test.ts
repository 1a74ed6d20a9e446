import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '@memex/testing';
import { groupCommit, openSqlite } from './sqlite';

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
