import { describeMongo } from '@memex/memo/testing/mongo';
import { chatStoreContract } from './contract';
import { MongoChatStore } from './mongodb';

describeMongo('chat store: MongoDB', (withDb) =>
  chatStoreContract(
    'MongoDB',
    withDb(async (db) => {
      const store = new MongoChatStore(db);
      await store.ready();
      return { store, dispose: () => store.close() };
    }),
  ),
);
