/**
 * The whole stack with `LLM_PROVIDER=openai` against a model server that misbehaves in each of
 * the chaos peer's ways. Through the HTTP API: every memo reaches `pending: false` within the
 * retry bound with its summary's source and reason in its status and history, nothing is
 * dead-lettered for a model's failure, chat and generate answer or fail with the spec's agent
 * error, and streams end with `done`.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Streams, type MemoHistoryResponse, type MemoStatusResponse, type StreamEvent } from '@memex/contracts';
import { collectMetrics } from '@memex/runtime';
import { chaosProse, startOpenAiPeer, type ChaosMode, type OpenAiPeer } from '@memex/testing';
import { memoApi } from '../support/api';
import { counter } from '../support/metrics';
import { startStack, type Stack } from '../support/stack';

const HARBOUR =
  'Container ships are unloaded by gantry cranes at the harbour. Each crane moves thirty containers an hour. Pilots bring the ships through the channel at high tide.';

const events = (body: string) =>
  body
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => JSON.parse(b.slice(6)) as StreamEvent);

/** Each mode, what the summary's source must be, and what the reason starts with. */
const SUMMARIES: [ChaosMode, 'model' | 'model-text' | 'extractive-fallback', RegExp | null][] = [
  ['prose', 'model-text', null],
  ['tools-ignored', 'model-text', null],
  ['fenced-json', 'model', null],
  ['invalid-json', 'model-text', null],
  ['slow-first-token', 'model-text', null],
  ['empty', 'extractive-fallback', /^empty: /],
  ['server-error', 'extractive-fallback', /^server_error: 500 chaos/],
  ['rate-limited', 'extractive-fallback', /^rate_limited: 429 chaos/],
  ['cut-mid-stream', 'extractive-fallback', /^(cut|unreachable): /],
  ['endless', 'extractive-fallback', /^timeout: /],
];

describe('a misbehaving model server through the whole stack', () => {
  let peer: OpenAiPeer;
  let stack: Stack;
  let key: string;
  let projectId: string;

  beforeAll(async () => {
    peer = await startOpenAiPeer({ models: ['chaos-model'] });
    stack = await startStack({
      env: {
        LLM_PROVIDER: 'openai',
        OPENAI_BASE_URL: peer.url,
        OPENAI_MAX_RETRIES: '0',
        OPENAI_TIMEOUT_MS: '1500',
        LLM_TIMEOUT_MS: '4000',
        LLM_SUMMARY_ATTEMPTS: '2',
        LLM_SUMMARY_BACKOFF_MS: '100',
        LLM_MAX_TOKENS: '40',
        MEMEX_RATE_LIMIT: '0',
      },
    });
    ({ key, projectId } = await stack.project());
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await peer?.close();
  });

  const get = async <T>(url: string): Promise<T> => {
    const res = await stack.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as T;
  };

  for (const [mode, source, reason] of SUMMARIES) {
    it(`${mode}: the memo is processed, its summary from ${source}, the source and reason in status and history`, async () => {
      peer.reset();
      peer.chaos(mode, { slowMs: 500 });
      const api = memoApi(stack.app, key);
      const id = await api.create({ title: `Harbour (${mode})`, content: HARBOUR });
      const memo = await api.processed(id, 20_000);
      expect(memo.processing_error).toBeNull();
      expect(memo.summary.length).toBeGreaterThan(0);
      expect(memo.tags.length).toBeGreaterThan(0);
      if (source === 'model-text') expect(memo.summary).toBe(chaosProse({ messages: [{ content: `<note>\n${HARBOUR}\n</note>` }] }));
      if (source === 'model') expect(memo.tags.map((t) => t.tag)).toEqual(['chaos', 'fenced']);
      if (source === 'extractive-fallback') expect(HARBOUR).toContain(memo.summary.split('.')[0]!);

      const status = await get<MemoStatusResponse>(`/api/v1/memo/${id}/status`);
      expect(status).toMatchObject({ status: 'processed', summary_source: source });
      if (reason) expect(status.summary_reason).toMatch(reason);
      else expect(status.summary_reason).toBeNull();

      const history = await get<MemoHistoryResponse>(`/api/v1/memo/${id}/history`);
      const summarized = history.revisions.find((r) => r.event === 'MemoSummarized');
      expect(summarized).toMatchObject({ actor: 'agent', summary_source: source });
      if (reason) expect(summarized?.summary_reason).toMatch(reason);
    }, 30_000);
  }

  it('dead-letters nothing for a model failure', async () => {
    const jsm = await jetstreamManager(stack.nc);
    const info = await jsm.streams.info(Streams.deadLetters, { subjects_filter: `memex.dlq.agent.>` });
    expect(Object.keys(info.state.subjects ?? {}).filter((s) => s.includes(projectId))).toEqual([]);
  });

  it('counts summaries by source and model errors by kind', async () => {
    const metrics = await collectMetrics(stack.nc, ['agent'], 500);
    const total = (name: string, labels: Record<string, string>) => [...counter(metrics, 'agent', name, labels).values()].reduce((a, b) => a + b, 0);
    // one memo per mode above: prose, tools-ignored, invalid-json, slow-first-token from text; fenced-json from JSON
    expect(total('memex_summaries_total', { source: 'model-text' })).toBe(4);
    expect(total('memex_summaries_total', { source: 'model' })).toBe(1);
    expect(total('memex_summaries_total', { source: 'extractive-fallback' })).toBe(5);
    // two attempts each (LLM_SUMMARY_ATTEMPTS=2)
    expect(total('memex_model_errors_total', { kind: 'server_error', operation: 'summarize' })).toBe(2);
    expect(total('memex_model_errors_total', { kind: 'rate_limited', operation: 'summarize' })).toBe(2);
    expect(total('memex_model_errors_total', { kind: 'timeout', operation: 'summarize' })).toBe(2);
  });

  it('readiness names the model and its last error', async () => {
    peer.reset();
    peer.chaos('server-error');
    const api = memoApi(stack.app, key);
    await api.processed(await api.create({ title: 'Harbour (ready)', content: HARBOUR }), 20_000);
    const ready = await stack.app.inject({ method: 'GET', url: '/readyz' });
    const agent = JSON.stringify(ready.json());
    expect(agent).toContain('"llm":"openai"');
    expect(agent).toMatch(/"llm_last_error":\{"operation":"summarize","kind":"server_error","message":"500 chaos: internal server error"/);
  }, 30_000);

  describe('chat and generate', () => {
    const ask = (url: string, payload: Record<string, unknown>) =>
      stack.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });

    it('prose, tools ignored, fenced and invalid JSON: chat and generate answer with the model\'s text, streamed and not', async () => {
      for (const mode of ['prose', 'tools-ignored', 'fenced-json', 'invalid-json'] as const) {
        peer.reset();
        peer.chaos(mode);
        const chat = await ask('/api/v1/chat', { query: 'How many containers does a crane move?' });
        expect(chat.statusCode, chat.body).toBe(200);
        expect(chat.json().response).toMatch(/^This text is mostly about /);
        const streamed = events((await ask('/api/v1/generate', { prompt: 'Write a brief on harbour cranes', stream: true })).body);
        expect(streamed.filter((e) => e.type === 'token').map((e) => (e as { content: string }).content).join('')).toMatch(/^This text is mostly about /);
        expect(streamed.at(-1)?.type).toBe('done');
      }
    }, 30_000);

    for (const mode of ['server-error', 'rate-limited', 'empty'] as const) {
      it(`${mode}: 500 Agent error non-streamed; streamed, an error event then done`, async () => {
        peer.reset();
        peer.chaos(mode);
        const chat = await ask('/api/v1/chat', { query: 'How many containers does a crane move?' });
        const detail = mode === 'empty' ? /^Agent error: the model sent an empty answer$/ : /^Agent error: .*chaos/;
        expect(chat.statusCode, chat.body).toBe(500);
        expect(chat.json().error).toMatch(detail);
        const streamed = await ask('/api/v1/generate', { prompt: 'Write a brief on harbour cranes', stream: true });
        expect(streamed.statusCode).toBe(200);
        const stream = events(streamed.body);
        expect(stream.at(-2)).toMatchObject({ type: 'error', error: expect.stringMatching(detail) });
        expect(stream.at(-1)?.type).toBe('done');
      }, 30_000);
    }

    it('cut mid-stream: the tokens sent, then an error event and done; the partial answer is kept in the chat (named in done only for a continued chat)', async () => {
      peer.reset();
      peer.chaos('cut-mid-stream');
      const streamed = await ask('/api/v1/chat', { query: 'Where do pilots bring the ships?', stream: true });
      const stream = events(streamed.body);
      const partial = stream.filter((e) => e.type === 'token').map((e) => (e as { content: string }).content).join('');
      expect(partial).toMatch(/^This text is mostly about/);
      expect(stream.at(-2)).toMatchObject({ type: 'error', error: expect.stringMatching(/^Agent error: /) });
      expect(stream.at(-1)?.type).toBe('done');
      const list = await get<{ results: { uuid: string; title: string }[] }>('/api/v1/chat?page_size=100');
      const stored = list.results.filter((c) => c.title === 'Where do pilots bring the ships?');
      expect(stored).toHaveLength(1);
      const chat = await get<{ messages: { sent_by: string; content: string; incomplete?: unknown }[] }>(`/api/v1/chat/${stored[0]!.uuid}`);
      expect(chat.messages.map((m) => [m.sent_by, m.content])).toEqual([
        ['user', 'Where do pilots bring the ships?'],
        ['model', partial],
      ]);
      // GET /api/v1/chat/{id} shows why the answer is partial (an optional field beside the spec's).
      expect(chat.messages[0]).not.toHaveProperty('incomplete');
      expect(chat.messages[1]!.incomplete).toEqual({ reason: 'error', detail: expect.stringMatching(/^Agent error: /) });
    }, 30_000);

    it('cut mid-stream, not streamed: 500 Agent error; the partial answer is kept in the chat', async () => {
      peer.reset();
      peer.chaos('cut-mid-stream');
      const chat = await ask('/api/v1/chat', { query: 'When do pilots bring the ships in?' });
      expect(chat.statusCode, chat.body).toBe(500);
      expect(chat.json().error).toMatch(/^Agent error: /);
      const list = await get<{ results: { uuid: string; title: string }[] }>('/api/v1/chat?page_size=100');
      const stored = list.results.find((c) => c.title === 'When do pilots bring the ships in?');
      const kept = await get<{ messages: { sent_by: string; content: string; incomplete?: unknown }[] }>(`/api/v1/chat/${stored!.uuid}`);
      expect(kept.messages.at(-1)).toMatchObject({ sent_by: 'model', content: expect.stringMatching(/^This text is mostly about/), incomplete: { reason: 'error' } });
    }, 30_000);

    it('endless: the stream is cut at LLM_MAX_TOKENS, named in the answer, streamed and not', async () => {
      peer.reset();
      peer.chaos('endless');
      const chat = await ask('/api/v1/chat', { query: 'How many containers does a crane move?' });
      expect(chat.statusCode, chat.body).toBe(200);
      expect(chat.json().response).toMatch(/^more0 more1 .* \[answer cut at LLM_MAX_TOKENS=40\]$/);
      expect(chat.json().response.match(/more\d+/g)).toHaveLength(40);
      const record = await get<{ messages: { incomplete?: unknown }[] }>(`/api/v1/chat/${chat.json().chat_id as string}`);
      expect(record.messages.at(-1)!.incomplete).toEqual({ reason: 'max_tokens', detail: 'cut at LLM_MAX_TOKENS=40' });
      const streamed = events((await ask('/api/v1/generate', { prompt: 'Write a brief on harbour cranes', stream: true })).body);
      expect(streamed.filter((e) => e.type === 'token').at(-1)).toEqual({ type: 'token', content: '[answer cut at LLM_MAX_TOKENS=40]' });
      expect(streamed.at(-1)?.type).toBe('done');
      // the upstream request is closed, not left streaming
      await expect.poll(() => peer.openRequests, { timeout: 2_000 }).toBe(0);
    }, 30_000);

    it('slow first token: the answer comes, late', async () => {
      peer.reset();
      peer.chaos('slow-first-token', { slowMs: 800 });
      const chat = await ask('/api/v1/chat', { query: 'How many containers does a crane move?' });
      expect(chat.statusCode, chat.body).toBe(200);
      expect(chat.json().response).toMatch(/^This text is mostly about /);
    }, 30_000);
  });
});
