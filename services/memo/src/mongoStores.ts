import { connectMongo } from '@memex/runtime';
import { MongoEventStore } from './eventStore/mongodb';
import { MongoMemoReadModel } from './readModel/mongodb';
import type { MemoStores } from './storesPort';

/** The production stores: event store and read model in one MongoDB database, majority writes. */
export async function openMongoMemoStores(url: string, dbName: string): Promise<MemoStores> {
  const client = await connectMongo(url);
  const db = client.db(dbName);
  const store = new MongoEventStore(db);
  const readModel = new MongoMemoReadModel(db);
  return {
    store,
    readModel,
    // WiredTiger frees the documents; pages are reused, not overwritten: sealed events are what make this shred-safe.
    afterErase: async () => undefined,
    close: async () => {
      await client.close();
    },
  };
}
