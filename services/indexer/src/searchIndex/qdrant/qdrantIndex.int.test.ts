/**
 * The search index contract against a real Qdrant (>= 1.16): `QDRANT_URL`, or a container when a
 * Docker engine answers; skipped with the reason otherwise. Each run owns a fresh collection prefix
 * and deletes its collections afterwards.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { QdrantClient } from '@qdrant/js-client-rest';
import { qdrantTestTarget, startQdrant, type QdrantTestServer } from '../../testing/qdrant';
import { searchIndexContract } from '../contract';
import { QdrantSearchIndex } from './qdrantIndex';

const target = qdrantTestTarget();

if (target.kind === 'unavailable') {
  // The default reporter lists skipped files without test names; say why here too.
  console.warn(target.reason);
  describe('search index contract: Qdrant', () => {
    it.skip(target.reason, () => undefined);
  });
} else {
  let server: QdrantTestServer | undefined;
  // Pulling the image can take longer than a hook's default timeout.
  beforeAll(async () => {
    server = await startQdrant(target);
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  searchIndexContract('Qdrant', async () => {
    const { url, apiKey } = server!;
    const prefix = `memex_test_${randomUUID().slice(0, 8)}`;
    const index = await QdrantSearchIndex.connect(url, { apiKey, collectionPrefix: prefix });
    return {
      index,
      dispose: async () => {
        await index.close();
        const client = new QdrantClient({ url, apiKey, checkCompatibility: false });
        const { collections } = await client.getCollections();
        for (const { name } of collections) {
          if (name.startsWith(`${prefix}_`)) await client.deleteCollection(name);
        }
      },
    };
  });
}
