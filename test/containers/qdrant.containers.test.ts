/**
 * The Qdrant search index against Qdrant in a container (the oldest supported release, as
 * deploy/compose pins it), through the search index contract the embedded index passes. Always a
 * container here, even when QDRANT_URL is set (that is what the *.int.test.ts suite uses).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { searchIndexContract } from '@memex/indexer/searchIndex/contract';
import { QdrantSearchIndex } from '@memex/indexer/searchIndex/qdrant/qdrantIndex';
import { QDRANT_TEST_IMAGE, startQdrant, type QdrantTestServer } from '@memex/indexer/testing/qdrant';
import { describeWithImages } from './support/docker';

describeWithImages(`Qdrant (${QDRANT_TEST_IMAGE}) in a container`, [QDRANT_TEST_IMAGE], () => {
  let server: QdrantTestServer | undefined;
  beforeAll(async () => {
    server = await startQdrant({ kind: 'container' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  searchIndexContract('Qdrant container', async () => {
    const { url } = server!;
    const prefix = `memex_test_${randomUUID().slice(0, 8)}`;
    const index = await QdrantSearchIndex.connect(url, { collectionPrefix: prefix });
    return {
      index,
      dispose: async () => {
        await index.close();
        const listed = (await (await fetch(`${url}/collections`)).json()) as { result: { collections: { name: string }[] } };
        for (const { name } of listed.result.collections) {
          if (name.startsWith(`${prefix}_`)) await fetch(`${url}/collections/${name}`, { method: 'DELETE' });
        }
      },
    };
  });
});
