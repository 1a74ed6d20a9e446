import { describe, expect, it } from 'vitest';
import { MemexClient, MemexApiError, parseEventStream, retryAfterMs } from './index';

type Call = { url: string; init: RequestInit; at: number };

/** A fetch that answers from a script and records what it was asked. */
function scripted(answers: (() => Response)[]) {
  const calls: Call[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, init, at: Date.now() });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next();
  }) as unknown as typeof globalThis.fetch;
  return { calls, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('MemexClient (scripted fetch)', () => {
  it('retries 429 after Retry-After and keeps one Idempotency-Key across the retries', async () => {
    const { calls, fetch } = scripted([json(429, { error: 'Rate limit exceeded' }, { 'retry-after': '0.3' }), json(200, { ok: true, memo_uuid: 'u' })]);
    const client = new MemexClient({ baseUrl: 'https://memex.test/api/v1/', apiKey: 'mxp_k', fetch });
    await expect(client.createMemo({ title: 't', content: 'c' })).resolves.toEqual({ ok: true, memo_uuid: 'u' });
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(290);
    const keys = calls.map((c) => (c.init.headers as Record<string, string>)['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(calls[0]!.url).toBe('https://memex.test/api/v1/memo');
    expect((calls[0]!.init.headers as Record<string, string>).authorization).toBe('Bearer mxp_k');
  });

  it('tells onRetry each wait it takes, Retry-After capped at maxRetryDelayMs, and not the answer it gives up on', async () => {
    const { calls, fetch } = scripted([
      json(429, { error: 'Rate limit exceeded' }, { 'retry-after': '120' }),
      json(503, { error: 'Service unavailable' }),
      json(503, { error: 'Service unavailable' }),
    ]);
    const waits: [number, number][] = [];
    const client = new MemexClient({ baseUrl: 'https://memex.test', apiKey: 'k', fetch, maxRetries: 2, retryBaseMs: 1, maxRetryDelayMs: 5, onRetry: (status, delayMs) => waits.push([status, delayMs]) });
    await expect(client.getMemo('0191e9a0-0000-7000-8000-000000000000')).rejects.toMatchObject({ status: 503 });
    expect(calls).toHaveLength(3);
    expect(waits.map(([status]) => status)).toEqual([429, 503]);
    expect(waits[0]![1]).toBe(5);
    expect(waits[1]![1]).toBeGreaterThan(0);
    expect(waits[1]![1]).toBeLessThanOrEqual(5);
  });

  it('gives up on 503 after maxRetries with the API’s status and message', async () => {
    const { calls, fetch } = scripted([0, 1, 2].map(() => json(503, { error: 'Service unavailable' })));
    const client = new MemexClient({ baseUrl: 'https://memex.test', apiKey: 'k', fetch, maxRetries: 2, retryBaseMs: 1 });
    const error = await client.getMemo('0191e9a0-0000-7000-8000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemexApiError);
    expect(error).toMatchObject({ status: 503, message: 'Service unavailable' });
    expect(calls).toHaveLength(3);
  });

  it('does not retry other errors, and names id_type and an organization’s project in the URL', async () => {
    const { calls, fetch } = scripted([json(404, { error: 'Memo not found' }, { 'x-request-id': 'r1' })]);
    const client = new MemexClient({ baseUrl: 'https://memex.test', apiKey: 'mxo_t', projectId: 'p1', fetch });
    const error = (await client.getMemo('ref/1', { idType: 'reference_id' }).catch((e: unknown) => e)) as MemexApiError;
    expect(error).toMatchObject({ status: 404, message: 'Memo not found', requestId: 'r1' });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('https://memex.test/api/v1/memo/ref%2F1?id_type=reference_id&project_id=p1');
  });

  it('puts an organization’s project in POST bodies of search', async () => {
    const { calls, fetch } = scripted([json(200, { results: [] })]);
    await new MemexClient({ baseUrl: 'https://memex.test', apiKey: 'mxo_t', projectId: 'p1', fetch }).search({ query: 'q', search_method: 'chunk_vector_search' });
    expect(JSON.parse(calls[0]!.init.body as string)).toEqual({ query: 'q', search_method: 'chunk_vector_search', project_id: 'p1' });
  });

  it('createMemos: splits into calls of batchSize, keys them <key>.<n>, answers per item in order', async () => {
    const memos = Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, content: `c${i}` }));
    const answer = (from: number, n: number, refused: number[] = []) =>
      json(200, { ok: true, results: Array.from({ length: n }, (_, i) => (refused.includes(from + i) ? { ok: false, status: 422, error: 'bad' } : { ok: true, memo_uuid: `u${from + i}` })) });
    const { calls, fetch } = scripted([answer(0, 2), json(503, { error: 'Service unavailable' }), answer(2, 2, [3]), answer(4, 1)]);
    const client = new MemexClient({ baseUrl: 'https://memex.test', apiKey: 'mxo_t', projectId: 'p1', fetch, retryBaseMs: 1 });
    const results = await client.createMemos(memos, { batchSize: 2, idempotencyKey: 'run-1' });
    expect(results).toEqual([
      { ok: true, memo_uuid: 'u0' },
      { ok: true, memo_uuid: 'u1' },
      { ok: true, memo_uuid: 'u2' },
      { ok: false, status: 422, error: 'bad' },
      { ok: true, memo_uuid: 'u4' },
    ]);
    expect(calls.map((c) => (c.init.headers as Record<string, string>)['idempotency-key'])).toEqual(['run-1.0', 'run-1.1', 'run-1.1', 'run-1.2']);
    expect(calls.map((c) => (JSON.parse(c.init.body as string) as { memos: { title: string }[] }).memos.map((m) => m.title))).toEqual([['t0', 't1'], ['t2', 't3'], ['t2', 't3'], ['t4']]);
    expect(calls[0]!.url).toBe('https://memex.test/api/v1/memo/batch?project_id=p1');
  });

  it('createMemos: one call sends the key as given (or a fresh one), none for no memos, and refuses a batchSize over 1000', async () => {
    const { calls, fetch } = scripted([json(200, { ok: true, results: [{ ok: true, memo_uuid: 'u' }] }), json(200, { ok: true, results: [{ ok: true, memo_uuid: 'v' }] })]);
    const client = new MemexClient({ baseUrl: 'https://memex.test', apiKey: 'k', fetch });
    await client.createMemos([{ title: 't', content: 'c' }], { idempotencyKey: 'once' });
    await client.createMemos([{ title: 't', content: 'c' }]);
    const keys = calls.map((c) => (c.init.headers as Record<string, string>)['idempotency-key']);
    expect(keys[0]).toBe('once');
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    await expect(client.createMemos([])).resolves.toEqual([]);
    await expect(client.createMemos([{ title: 't', content: 'c' }], { batchSize: 1001 })).rejects.toThrow(RangeError);
    expect(calls).toHaveLength(2);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('parses an event stream split anywhere, skipping comments', async () => {
    const text = ': ping\n\ndata: {"type":"token","content":"Hel"}\r\n\r\ndata: {"type":"token",\ndata: "content":"lo"}\n\ndata: {"type":"done","chat_id":"c"}\n\n';
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
        controller.close();
      },
    });
    const events: unknown[] = [];
    for await (const event of parseEventStream(body)) events.push(event);
    expect(events).toEqual([{ type: 'token', content: 'Hel' }, { type: 'token', content: 'lo' }, { type: 'done', chat_id: 'c' }]);
  });
});
