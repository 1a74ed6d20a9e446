import { join } from 'node:path';
import { checkpointAfterErase, openSqlite } from '@memex/runtime';
import type { MemoConfig } from './config';
import { SqliteEventStore } from './eventStore/sqlite';
import { memoWriteForms } from './formats';
import { SqliteMemoReadModel } from './readModel/sqlite';
import type { MemoStores } from './storesPort';

/** MongoDB when MONGODB_URL is set; otherwise one SQLite file in the data directory. */
export async function openMemoStores(config: MemoConfig): Promise<MemoStores> {
  if (config.MONGODB_URL) {
    const { openMongoMemoStores } = await import('./mongoStores');
    return openMongoMemoStores(config.MONGODB_URL, config.MONGODB_DB);
  }
  const db = openSqlite(join(config.MEMEX_DATA_DIR, 'memo', 'memo.db'));
  // Erased events and removed memos are overwritten on disk, not just unlinked from the b-tree.
  db.pragma('secure_delete = ON');
  const { compactRows } = memoWriteForms(config);
  const store = new SqliteEventStore(db, { compact: compactRows });
  const readModel = new SqliteMemoReadModel(db, { compact: compactRows });
  return {
    store,
    readModel,
    afterErase: async () => {
      checkpointAfterErase(db);
    },
    close: async () => {
      if (db.open) db.close();
    },
  };
}
