/**
 * The MongoDB adapters against MongoDB 7 in a container (a replica set of one, as
 * deploy/compose runs it), through the same contract suites the SQLite adapters pass: the memo
 * event store, the memo read model and the agent's chat store. Always a container here, even when
 * MONGODB_URL is set (that is what the *.int.test.ts suites use).
 */
import { chatStoreContract } from '@memex/agent/chats/contract';
import { MongoChatStore } from '@memex/agent/chats/mongodb';
import { eventStoreContract } from '@memex/memo/eventStore/contract';
import { MongoEventStore } from '@memex/memo/eventStore/mongodb';
import { readModelContract } from '@memex/memo/readModel/contract';
import { MongoMemoReadModel } from '@memex/memo/readModel/mongodb';
import { MONGO_IMAGE, describeMongo } from '@memex/memo/testing/mongo';
import { describeWithImages } from './support/docker';

describeWithImages(`MongoDB (${MONGO_IMAGE}, replica set of one) in a container`, [MONGO_IMAGE], () => {
  describeMongo(
    'MongoDB adapters',
    (withDb) => {
      eventStoreContract(
        'MongoDB container',
        withDb(async (db) => {
          const store = new MongoEventStore(db);
          await store.ready();
          return { store, dispose: () => store.close() };
        }),
      );
      readModelContract(
        'MongoDB container',
        withDb(async (db) => {
          const readModel = new MongoMemoReadModel(db);
          await readModel.ready();
          return { readModel, dispose: () => readModel.close() };
        }),
      );
      chatStoreContract(
        'MongoDB container',
        withDb(async (db) => {
          const store = new MongoChatStore(db);
          await store.ready();
          return { store, dispose: () => store.close() };
        }),
      );
    },
    { kind: 'docker' },
  );
});
