import { mongoDriver } from '@memex/runtime';
import type { MemoStores } from './stores';
import { MongoEventStore } from './eventStore/mongodb';
import { MongoMemoReadModel } from './readModel/mongodb';

/** The production stores: event store and read model in one MongoDB database, majority writes. */
export async function openMongoMemoStores(url: string, dbName: string): Promise<MemoStores> {
  const { MongoClient } = await mongoDriver();
  const client = new MongoClient(url, { writeConcern: { w: 'majority' }, readConcern: { level: 'majority' } });
  await client.connect();
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
