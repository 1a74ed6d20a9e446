import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventStoreContract } from './contract';
import { SqliteEventStore } from './sqlite';

eventStoreContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memex-es-'));
  const store = new SqliteEventStore(join(dir, 'memo.db'));
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
