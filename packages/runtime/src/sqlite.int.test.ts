import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '@memex/testing';
import { openSqlite } from './sqlite';

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
