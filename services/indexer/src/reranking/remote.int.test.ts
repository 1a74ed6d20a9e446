import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemexError } from '@memex/contracts';
import { peerRerankScore, startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { hybridSearch } from '../search/hybrid';
import type { SearchIndex } from '../searchIndex/port';
import type { ModelSet } from '../state/models';
import type { Reranker } from './port';
import { RemoteReranker, RerankError } from './remote';
import { rerankHits } from './rerank';

const DOCS = ['the cat sat on the mat', 'stock market shares fell', 'the market for cat food', 'planes and pilots'];

describe('remote reranker against a scripted peer', () => {
  let peer: OpenAiPeer;
  beforeAll(async () => {
    peer = await startOpenAiPeer({ apiKey: 'rk' });
  });
  afterAll(async () => {
    await peer.close();
  });

  it.each([
    ['tei', () => peer.root, '/rerank'],
    ['cohere', () => peer.url, '/v1/rerank'],
  ] as const)('%s shape: scores every document in input order', async (api, base, path) => {
    peer.reset();
    const reranker = new RemoteReranker({ api, baseUrl: base(), model: 'test-rerank', apiKey: 'rk' });
    const scores = await reranker.score('cat market', DOCS);
    expect(scores).toEqual(DOCS.map((d) => peerRerankScore('cat market', d)));
    const [call] = peer.requests;
    expect(call!.path).toBe(path);
    expect(call!.headers.authorization).toBe('Bearer rk');
    if (api === 'tei') expect(call!.body).toMatchObject({ query: 'cat market', texts: DOCS });
    else expect(call!.body).toMatchObject({ model: 'test-rerank', query: 'cat market', documents: DOCS, top_n: 4 });
    expect(await reranker.score('x', [])).toEqual([]);
  });

  it('retries 503 and fails clearly on 400', async () => {
    const reranker = new RemoteReranker({ api: 'cohere', baseUrl: peer.url, apiKey: 'rk', retryBaseMs: 5 });
    peer.failNext('rerank', 503, 2);
    expect(await reranker.score('cat', DOCS)).toHaveLength(4);
    peer.failNext('rerank', 400, 1);
    await expect(reranker.score('cat', DOCS)).rejects.toThrow(RerankError);
  });
});

describe('reranking the fused candidates', () => {
  const hit = (content: string, distance: number) => ({ content, memoTitle: '', distance });
  const fixed = (scores: number[]): Reranker => ({ name: 'fixed', score: async () => scores, dispose: async () => undefined });

  it('orders by relevance, keeps top k, makes distance 1 − relevance, ties keep the fused order', async () => {
    const hits = [hit('a', 0.1), hit('b', 0.2), hit('c', 0.3), hit('d', 0.4)];
    const out = await rerankHits(fixed([0.2, 0.9, 0.2, 0.5]), 'q', hits, 3);
    expect(out.map((h) => h.content)).toEqual(['b', 'd', 'a']);
    expect(out.map((h) => h.distance)).toEqual([expect.closeTo(0.1, 9), expect.closeTo(0.5, 9), expect.closeTo(0.8, 9)]);
  });

  it('shows the reranker the memo title beside the chunk', async () => {
    const seen: string[][] = [];
    const spy: Reranker = { name: 'spy', score: async (_q, docs) => (seen.push([...docs]), docs.map(() => 0.5)), dispose: async () => undefined };
    await rerankHits(spy, 'q', [{ content: 'body', memoTitle: 'Title', distance: 0 }], 1);
    expect(seen).toEqual([['Title\nbody']]);
  });

  it('refuses reranking.enabled without a reranker, before searching', async () => {
    const untouched = new Proxy({}, { get: () => () => Promise.reject(new Error('must not be called')) });
    const run = hybridSearch(untouched as SearchIndex, untouched as ModelSet, { projectId: 'p', query: 'q', filters: [], limit: 5, rerank: { enabled: true } }, { lexicalWeight: 0.5, candidates: 10 });
    await expect(run).rejects.toBeInstanceOf(MemexError);
    await expect(run).rejects.toThrow(/no reranker is configured/);
  });
});
