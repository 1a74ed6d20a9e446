import { join } from 'node:path';
import { checkpointAfterErase, openSqlite } from '@memex/runtime';
import type { MemoConfig } from './config';
import { SqliteEventStore } from './eventStore/sqlite';
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
  const store = new SqliteEventStore(db, { compact: config.MEMEX_SEAL_DEFLATE });
  const readModel = new SqliteMemoReadModel(db, { compact: config.MEMEX_SEAL_DEFLATE });
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
