/**
 * Switching between the local embedding model and a remote one (an OpenAI-compatible
 * `/v1/embeddings` peer) re-indexes by replay, as any model switch does, and search answers with
 * every memo throughout: before, during and after each switch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchResultItem } from '@memex/contracts';
import { IndexStateStore } from '@memex/runtime';
import { eventually, startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { memoApi } from '../support/api';
import { startStack, type Stack } from '../support/stack';

describe('switching between local and remote embeddings', () => {
  let peer: OpenAiPeer;
  let stack: Stack;
  beforeAll(async () => {
    peer = await startOpenAiPeer({ dimension: 32 });
    stack = await startStack({ env: { EMBEDDING_URL: peer.url, MEMEX_RATE_LIMIT: '0' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await peer?.close();
  });

  it('re-indexes local → remote → local by replay, with search serving every memo throughout', async () => {
    const { key } = await stack.project();
    const api = memoApi(stack.app, key);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await api.create({ title: `Memo ${i}`, content: `Report ${i} about the lighthouse keeper and the coastal fog.` }));
    for (const id of ids) await api.processed(id, 20_000);

    const search = async () => {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/search',
        headers: api.headers,
        payload: { query: 'lighthouse keeper coastal fog', search_method: 'chunk_vector_search', limit: 50 },
      });
      expect(res.statusCode, res.body).toBe(200);
      return new Set((res.json().results as SearchResultItem[]).map((h) => h.memo_uuid));
    };
    const store = await IndexStateStore.open(stack.nc);

    for (const model of ['openai:test-embed', 'memex-glove-100d']) {
      const embedCallsBefore = peer.requests.filter((r) => r.path === '/v1/embeddings').length;
      await store.update((current) => ({ ...current!, reindex: { model, requestedAt: new Date().toISOString() } }));
      let searches = 0;
      const missing: string[] = [];
      let last: unknown;
      await eventually(
        async () => {
          const found = await search();
          searches += 1;
          for (const id of ids) if (!found.has(id)) missing.push(id);
          const { state } = await store.read();
          last = state;
          return state?.activeModel === model && !state.reindex;
        },
        60_000,
        50,
      ).catch((error: unknown) => {
        throw new Error(`switch to ${model}: ${(error as Error).message}; index state ${JSON.stringify(last)}`);
      });
      expect(searches).toBeGreaterThan(0);
      expect(missing, `memos missing from search while switching to ${model}`).toEqual([]);
      const found = await search();
      for (const id of ids) expect(found.has(id)).toBe(true);
      const embedCalls = peer.requests.filter((r) => r.path === '/v1/embeddings').length - embedCallsBefore;
      // To the remote model: every memo's chunks went through the peer (plus probes and queries).
      if (model.startsWith('openai:')) expect(embedCalls).toBeGreaterThanOrEqual(2);
    }
    // Back on the local model, queries no longer reach the peer.
    const calls = peer.requests.length;
    await search();
    expect(peer.requests.length).toBe(calls);
  }, 150_000);
});
