import { describeMongo } from '../testing/mongo';
import { readModelContract } from './contract';
import { MongoMemoReadModel } from './mongodb';

describeMongo('memo read model: MongoDB', (withDb) =>
  readModelContract(
    'MongoDB',
    withDb(async (db) => {
      const readModel = new MongoMemoReadModel(db);
      await readModel.ready();
      return { readModel, dispose: () => readModel.close() };
    }),
  ),
);
