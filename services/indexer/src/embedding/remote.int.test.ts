import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peerEmbedding, startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { embedderContract } from './contract';
import { DEFAULT_EMBEDDING_MODEL, loadEmbedder } from './embedder';
import type { RemoteEmbedder} from './remote';
import { RemoteEmbeddingError, loadRemoteEmbedder, parseRemoteModel } from './remote';

const MODELS_DIR = path.resolve(import.meta.dirname, '../../../../models');

embedderContract(`local (${DEFAULT_EMBEDDING_MODEL})`, async () => {
  const embedder = await loadEmbedder({ model: DEFAULT_EMBEDDING_MODEL, modelsDir: MODELS_DIR, allowRemote: false, batchSize: 4 });
  return { embedder, batchSize: 4, dispose: () => embedder.dispose() };
});

for (const api of ['openai', 'ollama'] as const) {
  embedderContract(`remote ${api} API (scripted peer)`, async () => {
    const peer = await startOpenAiPeer({ dimension: 24 });
    const embedder = await loadRemoteEmbedder({
      modelId: `${api}:test-embed`,
      api,
      model: 'test-embed',
      baseUrl: api === 'openai' ? peer.url : peer.root,
      batchSize: 4,
    });
    return { embedder, batchSize: 4, dispose: () => peer.close() };
  });
}

const realUrl = process.env.EMBEDDING_TEST_URL?.trim();
const realModel = process.env.EMBEDDING_TEST_MODEL?.trim();
if (realUrl && realModel) {
  const remote = parseRemoteModel(realModel);
  embedderContract(`remote (real server at ${realUrl}, ${realModel})`, async () => {
    if (!remote) throw new Error('EMBEDDING_TEST_MODEL must be openai:<model> or ollama:<model>');
    const embedder = await loadRemoteEmbedder({ modelId: realModel, api: remote.api, model: remote.name, baseUrl: realUrl, batchSize: 8 });
    return { embedder, batchSize: 8, dispose: () => embedder.dispose() };
  });
} else {
  describe('Embedder port contract: remote (real server)', () => {
    it.skip('skipped: set EMBEDDING_TEST_URL and EMBEDDING_TEST_MODEL (openai:<model> or ollama:<model>)', () => {});
  });
}

describe('remote embedder against a scripted peer', () => {
  let peer: OpenAiPeer;
  beforeAll(async () => {
    peer = await startOpenAiPeer({ dimension: 12, apiKey: 'k' });
  });
  afterAll(async () => {
    await peer.close();
  });
  const open = (over: Partial<ConstructorParameters<typeof RemoteEmbedder>[0]> = {}) =>
    loadRemoteEmbedder({ modelId: 'openai:test-embed', api: 'openai', model: 'test-embed', baseUrl: peer.url, apiKey: 'k', batchSize: 3, retryBaseMs: 5, ...over });

  it('reads model names: openai:/ollama: prefixes are remote, anything else is local', () => {
    expect(parseRemoteModel('openai:text-embedding-3-small')).toEqual({ api: 'openai', name: 'text-embedding-3-small' });
    expect(parseRemoteModel('ollama:nomic-embed-text:latest')).toEqual({ api: 'ollama', name: 'nomic-embed-text:latest' });
    expect(parseRemoteModel('Xenova/all-MiniLM-L6-v2')).toBeUndefined();
  });

  it('batches requests, sends model, key and prefixes, and learns the dimension', async () => {
    peer.reset();
    const embedder = await open({ queryPrefix: 'query: ' });
    expect(embedder.dimension).toBe(12);
    const vectors = await embedder.embed(['a', 'b', 'c', 'd', 'e', ''], 'query');
    const calls = peer.requests.filter((r) => r.path === '/v1/embeddings');
    expect(calls.map((c) => c.body.input)).toEqual([['dimension probe'], ['query: a', 'query: b', 'query: c'], ['query: d', 'query: e']]);
    expect(calls.every((c) => c.body.model === 'test-embed' && c.headers.authorization === 'Bearer k')).toBe(true);
    const expected = peerEmbedding('query: a', 12, 'test-embed');
    expected.forEach((x, i) => expect(vectors[0]![i]).toBeCloseTo(x, 5));
    expect([...vectors[5]!].every((x) => x === 0)).toBe(true);
  });

  it('retries 429/503 and fails clearly on 400 or a dimension change', async () => {
    const embedder = await open();
    peer.failNext('embeddings', 503, 2);
    expect(await embedder.embed(['x'], 'document')).toHaveLength(1);
    peer.failNext('embeddings', 400, 1);
    await expect(embedder.embed(['x'], 'document')).rejects.toThrow(RemoteEmbeddingError);
    peer.dimension = 13;
    try {
      await expect(embedder.embed(['x'], 'document')).rejects.toThrow(/13 dimensions, expected 12/);
    } finally {
      peer.dimension = 12;
    }
  });
});
