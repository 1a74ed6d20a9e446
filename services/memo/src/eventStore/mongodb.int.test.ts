import { describeMongo } from '../testing/mongo';
import { eventStoreContract } from './contract';
import { MongoEventStore } from './mongodb';

describeMongo('event store: MongoDB', (withDb) =>
  eventStoreContract(
    'MongoDB',
    withDb(async (db) => {
      const store = new MongoEventStore(db);
      await store.ready();
      return { store, dispose: () => store.close() };
    }),
  ),
);
