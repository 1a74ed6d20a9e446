import { GridFsBlobStore } from '@memex/runtime';
import { blobStoreContract } from '@memex/runtime/blobs/contract';
import { describeMongo } from './testing/mongo';

describeMongo('blob store: GridFS', (withDb) =>
  blobStoreContract(
    'GridFS',
    withDb(async (db) => {
      const store = await GridFsBlobStore.open(db);
      return { store, dispose: () => store.close() };
    }),
  ),
);
