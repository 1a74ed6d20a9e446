/**
 * The example of packages/testcontainers/README.md, verbatim below this comment (a unit test in
 * test/deploy checks they stay the same): a user's integration test starting the standalone
 * Memex image with @memex/testcontainers.
 */
import { MemexContainer, type StartedMemexContainer } from '@memex/testcontainers';
import { afterAll, beforeAll, expect, it } from 'vitest';

let memex: StartedMemexContainer;

beforeAll(async () => {
  memex = await new MemexContainer().withProjectName('my-app-tests').start();
}, 180_000);

afterAll(async () => {
  await memex?.stop();
});

it('finds what my app stored', async () => {
  const created = await memex.api<{ memo_uuid: string }>('POST', '/api/v1/memo', {
    title: 'Harbour logistics',
    content: 'Container ships unload at the harbour cranes. Trucks carry the containers inland.',
  });
  expect(created.status).toBe(200);

  // Processing (chunks, embeddings, summary) is asynchronous: wait until the memo is no longer pending.
  await expect
    .poll(async () => (await memex.api<{ pending: boolean }>('GET', `/api/v1/memo/${created.body.memo_uuid}`)).body.pending, { timeout: 60_000 })
    .toBe(false);

  const found = await memex.api<{ results: { memo_uuid: string }[] }>('POST', '/api/v1/search', {
    query: 'trucks carry containers',
    search_method: 'chunk_vector_search',
  });
  expect(found.body.results[0]?.memo_uuid).toBe(created.body.memo_uuid);
});
