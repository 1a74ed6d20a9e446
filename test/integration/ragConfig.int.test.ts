/**
 * rag_config and references through the whole stack (extractive LLM, a remote reranker served by
 * the scripted OpenAI-compatible peer in Cohere/Jina shape): every knob reaches retrieval, bad
 * values are 400 naming the field, references come back whole and as an SSE event before done.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatResponse, SearchResultItem, StreamEvent } from '@memex/contracts';
import { peerRerankScore, startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { memoApi } from '../support/api';
import { startStack, type Stack } from '../support/stack';

const events = (body: string) =>
  body
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => JSON.parse(b.slice(6)) as StreamEvent);

const MEMOS = [
  { title: 'Harbour cranes', content: 'Gantry cranes at the harbour move thirty containers an hour. The cranes run on rails along the quay.' },
  { title: 'Crane maintenance', content: 'The gantry cranes need new cables next spring; the work costs forty thousand euros.' },
  { title: 'Fog at sea', content: 'Coastal fog delays ships at the harbour entrance most mornings in autumn.' },
  { title: 'Pilot boats', content: 'Pilot boats guide container ships into the harbour when the fog lifts.' },
  { title: 'Quay rails', content: 'The quay rails were replaced in 2019 so heavier cranes can move along the harbour.' },
];

describe('rag_config and references through the stack', () => {
  let peer: OpenAiPeer;
  let stack: Stack;
  let key: string;
  const ids: string[] = [];

  beforeAll(async () => {
    peer = await startOpenAiPeer();
    stack = await startStack({ env: { RERANKER: 'cohere', RERANKER_URL: peer.url, RERANKER_MODEL: 'test-rerank', MEMEX_RATE_LIMIT: '0' } });
    ({ key } = await stack.project());
    const api = memoApi(stack.app, key);
    for (const memo of MEMOS) ids.push(await api.create(memo));
    for (const id of ids) await api.processed(id, 20_000);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await peer?.close();
  });

  const post = (url: string, payload: Record<string, unknown>) => stack.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });
  const reranks = () => peer.requests.filter((r) => r.path === '/v1/rerank');

  describe('validation', () => {
    it.each([
      ['/api/v1/chat', { query: 'q', rag_config: { vector_search: { top_k: 201 } } }, 'rag_config.vector_search.top_k must be an integer from 1 to 200'],
      ['/api/v1/chat', { query: 'q', rag_config: { reranking: { top_k: 0 } } }, 'rag_config.reranking.top_k must be an integer from 1 to 100'],
      ['/api/v1/generate', { prompt: 'p', rag_config: { vector_search: { top_k: 5 }, reranking: { top_k: 6 } } }, 'rag_config.reranking.top_k must be less than or equal to rag_config.vector_search.top_k'],
      ['/api/v1/generate', { prompt: 'p', rag_config: { references: { enabled: 'yes' } } }, 'rag_config.references.enabled must be a boolean'],
      ['/api/v1/chat', { query: 'q', rag_config: { vector_search: { similarity_threshold: 2 } } }, 'rag_config.vector_search.similarity_threshold must be a number from 0 to 1'],
      ['/api/v1/chat', { query: 'q', rag_config: { llm_provider: 'anthropic' } }, 'rag_config.llm_provider must be one of extractive, ollama, openai'],
      ['/api/v1/search', { query: 'q', search_method: 'chunk_vector_search', rag_config: { references: { enabled: true } } }, "Unknown field: 'rag_config.references'"],
      ['/api/v1/chat', { query: 'q', rag_config: { vectorSearch: { topK: 0 } } }, 'rag_config.vector_search.top_k must be an integer from 1 to 200'],
      ['/api/v1/chat', { query: 'q', rag_config: { vector_search: { top_k: 5 }, vectorSearch: { topK: 5 } } }, 'rag_config.vector_search and rag_config.vectorSearch are the same setting: give one'],
    ])('%s rejects %j', async (url, payload, error) => {
      const res = await post(url, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error });
    });

    it('rejects an llm_provider that is not the configured one, streamed or not, before any token', async () => {
      for (const [url, body] of [
        ['/api/v1/chat', { query: 'cranes' }],
        ['/api/v1/generate', { prompt: 'cranes' }],
      ] as const) {
        for (const stream of [false, true]) {
          const res = await post(url, { ...body, stream, rag_config: { llm_provider: 'openai' } });
          expect(res.statusCode).toBe(400);
          expect(res.json().error).toBe("rag_config.llm_provider 'openai' is not configured on this server; it answers with 'extractive'");
        }
      }
      expect((await post('/api/v1/chat', { query: 'cranes', rag_config: { llm_provider: 'extractive' } })).statusCode).toBe(200);
    });
  });

  describe('references', () => {
    it('are absent by default and, when enabled, key each chunk the answer was given by its [n] marker', async () => {
      const plain = (await post('/api/v1/chat', { query: 'How many containers do the cranes move?' })).json() as ChatResponse;
      expect(plain.references).toBeUndefined();
      const res = await post('/api/v1/chat', { query: 'How many containers do the cranes move?', rag_config: { references: { enabled: true } } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as ChatResponse;
      const refs = body.references!;
      expect(Array.isArray(refs)).toBe(false);
      const numbers = Object.keys(refs);
      expect(numbers.length).toBeGreaterThan(0);
      expect(numbers.map(Number)).toEqual(numbers.map((_, i) => i + 1));
      for (const r of Object.values(refs)) {
        expect(Object.keys(r).sort()).toEqual(['chunk_uuid', 'memo_title', 'memo_uuid']);
        expect(ids).toContain(r.memo_uuid);
        expect(MEMOS[ids.indexOf(r.memo_uuid)]!.title).toBe(r.memo_title);
      }
      const retrieved = body.intermediate_steps[0]!.results.map((r) => r.chunk_uuid);
      expect(Object.values(refs).map((r) => r.chunk_uuid)).toEqual(retrieved);
      // Every [n] the answer cites resolves to the same chunk through references[n].
      expect(body.citations.length).toBeGreaterThan(0);
      for (const c of body.citations) expect(refs[String(c.index)]).toEqual({ memo_uuid: c.memo_uuid, memo_title: c.memo_title, chunk_uuid: c.chunk_uuid });

      const generated = (await post('/api/v1/generate', { prompt: 'Write about the harbour cranes', rag_config: { references: { enabled: true } } })).json();
      expect(Object.keys(generated.references).length).toBeGreaterThan(0);
    });

    it('stream as a references event just before done, the object as JSON text in content', async () => {
      for (const [url, body] of [
        ['/api/v1/chat', { query: 'What do the cranes need next spring?' }],
        ['/api/v1/generate', { prompt: 'Write about crane maintenance' }],
      ] as const) {
        const res = await post(url, { ...body, stream: true, rag_config: { references: { enabled: true } } });
        const stream = events(res.body);
        const types = stream.map((e) => e.type);
        expect(types.slice(-2)).toEqual(['references', 'done']);
        const event = stream.at(-2) as Extract<StreamEvent, { type: 'references' }>;
        expect(typeof event.content).toBe('string');
        const refs = JSON.parse(event.content) as Record<string, { memo_uuid: string }>;
        expect(Object.keys(refs).length).toBeGreaterThan(0);
        for (const r of Object.values(refs)) expect(ids).toContain(r.memo_uuid);
        const plain = events((await post(url, { ...body, stream: true })).body);
        expect(plain.some((e) => e.type === 'references')).toBe(false);
      }
    });

    // The request Skald's Node SDK (0.4) sends for chat/streamedChat: its RAGConfig type spells the
    // knobs in camelCase, and it reads `references[n]` for a [n] marker and, streamed, JSON.parse(content).
    it("takes the Node SDK's camelCase rag_config and answers in the shape it reads", async () => {
      const rag_config = {
        llmProvider: 'extractive',
        queryRewrite: { enabled: false },
        vectorSearch: { topK: 20, similarityThreshold: 0 },
        reranking: { enabled: false, topK: 5 },
        references: { enabled: true },
      };
      const res = await post('/api/v1/chat', { query: 'How many containers do the cranes move?', rag_config, stream: false });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as ChatResponse;
      expect(body.intermediate_steps[0]!.results).toHaveLength(5);
      const markers = [...body.response.matchAll(/\[(\d+)\]/g)].map((m) => m[1]!);
      expect(markers.length).toBeGreaterThan(0);
      for (const n of markers) expect(ids).toContain(body.references![n]!.memo_uuid);

      const streamed = events((await post('/api/v1/chat', { query: 'How many containers do the cranes move?', rag_config, stream: true })).body);
      const text = streamed.flatMap((e) => (e.type === 'token' ? [e.content] : [])).join('');
      const refs = JSON.parse((streamed.find((e) => e.type === 'references') as { content: string }).content) as Record<string, { memo_uuid: string; memo_title: string }>;
      for (const n of [...text.matchAll(/\[(\d+)\]/g)].map((m) => m[1]!)) expect(refs[n]!.memo_title).toBe(MEMOS[ids.indexOf(refs[n]!.memo_uuid)]!.title);
      expect(streamed.at(-1)).toMatchObject({ type: 'done', chat_id: expect.any(String) });
    });
  });

  describe('retrieval knobs', () => {
    const search = async (rag?: Record<string, unknown>, limit = 10) => {
      const res = await post('/api/v1/search', { query: 'harbour cranes quay', search_method: 'chunk_vector_search', limit, ...(rag ? { rag_config: rag } : {}) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().results as SearchResultItem[];
    };

    it('reranks the fused candidates by default when a reranker is configured, ordering by its scores', async () => {
      peer.reset();
      const results = await search();
      expect(reranks()).toHaveLength(1);
      const sent = reranks()[0]!.body;
      expect(sent).toMatchObject({ model: 'test-rerank', query: 'harbour cranes quay' });
      expect(sent.documents.length).toBe(results.length);
      const scores = results.map((r) => peerRerankScore('harbour cranes quay', `${r.memo_title}\n${r.chunk_content}`));
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      results.forEach((r, i) => expect(r.distance).toBeCloseTo(1 - scores[i]!, 6));
    });

    it('reranking.enabled false skips the reranker; vector_search.top_k and reranking.top_k size the pool and the answer', async () => {
      peer.reset();
      await search({ reranking: { enabled: false } });
      expect(reranks()).toHaveLength(0);
      const top = await search({ vector_search: { top_k: 3 }, reranking: { top_k: 2 } });
      expect(reranks()[0]!.body.documents).toHaveLength(3);
      expect(top).toHaveLength(2);
    });

    it('similarity_threshold drops fused candidates below it', async () => {
      const all = await search({ reranking: { enabled: false } });
      const cut = 1 - all[Math.floor(all.length / 2)]!.distance!;
      const kept = await search({ reranking: { enabled: false }, vector_search: { similarity_threshold: cut } });
      expect(kept.length).toBeLessThan(all.length);
      expect(kept.length).toBeGreaterThan(0);
      for (const r of kept) expect(1 - r.distance!).toBeGreaterThanOrEqual(cut - 1e-9);
    });

    it('chat passes the knobs on: reranking.top_k passages, reranked', async () => {
      // Skald's snake_case and its Node SDK's camelCase spellings reach retrieval alike.
      for (const rag_config of [{ vector_search: { top_k: 4 }, reranking: { top_k: 2 } }, { vectorSearch: { topK: 4 }, reranking: { topK: 2 } }]) {
        peer.reset();
        const body = (await post('/api/v1/chat', { query: 'harbour cranes quay', rag_config })).json() as ChatResponse;
        expect(reranks()[0]!.body.documents).toHaveLength(4);
        expect(body.intermediate_steps[0]!.results).toHaveLength(2);
        expect(body.intermediate_steps[0]!.input.limit).toBe(2);
      }
    });

    it('query_rewrite puts the previous question beside a follow-up (the extractive provider cannot rewrite)', async () => {
      const first = (await post('/api/v1/chat', { query: 'What do the gantry cranes need next spring?' })).json() as ChatResponse;
      const follow = (await post('/api/v1/chat', { query: 'And what does it cost?', chat_id: first.chat_id, rag_config: { query_rewrite: { enabled: true } } })).json() as ChatResponse;
      expect(follow.intermediate_steps[0]!.input.query).toBe('What do the gantry cranes need next spring? And what does it cost?');
      const plain = (await post('/api/v1/chat', { query: 'And what does it cost?', chat_id: first.chat_id })).json() as ChatResponse;
      expect(plain.intermediate_steps[0]!.input.query).toBe('And what does it cost?');
    });
  });
});
