/**
 * POST /api/v1/memo/batch over HTTPS: each memo created or refused exactly as its own POST would be,
 * in order; the envelope, body limit and rate limit; idempotent retries; scoped keys; the audit trail.
 */
import { Agent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { httpsJson, type HttpsResponse } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { startStack, type Stack } from '../../../test/support/stack';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MAX_CONTENT_BYTES = 20_000;
const BATCH_BODY_LIMIT = 2_000_000;
const RATE_LIMIT = 1_800;

describe('POST /api/v1/memo/batch over HTTPS', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let agent: Agent;
  let key: string;

  const api = (method: string, path: string, k: string | null, body?: unknown, headers?: Record<string, string>): Promise<HttpsResponse<Json>> =>
    httpsJson<Json>(method, `${https.url}${path}`, { agent, ...(k ? { key: k } : {}), ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  const batch = (k: string, memos: unknown[], headers?: Record<string, string>) => api('POST', '/api/v1/memo/batch', k, { memos }, headers);
  const count = async (k: string) => (await api('GET', '/api/v1/memo?page_size=1', k)).body.count as number;
  const memo = (i: number, extra: Json = {}) => ({ title: `Tide table ${i}`, content: `High water at ${i} o'clock, low water six hours later.`, ...extra });

  beforeAll(async () => {
    stack = await startStack({
      indexer: false,
      env: { MEMEX_RATE_LIMIT: String(RATE_LIMIT), MEMEX_MAX_CONTENT_BYTES: String(MAX_CONTENT_BYTES), MEMEX_BATCH_BODY_LIMIT: String(BATCH_BODY_LIMIT) },
    });
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, ca: https.ca });
    ({ key } = await stack.project('batch'));
  }, 90_000);

  afterAll(async () => {
    agent?.destroy();
    await https?.close();
    await stack?.stop();
  });

  it('creates the valid memos and refuses each invalid one with the status and text its own POST gets, in order', async () => {
    const stored = await api('POST', '/api/v1/memo', key, memo(0, { reference_id: 'stored-ref' }));
    expect(stored.status, stored.text).toBe(200);
    const before = await count(key);
    const invalid: unknown[] = [
      { content: 'no title' },
      { title: 'no content' },
      { title: 'T', content: 'C', colour: 'blue' },
      { title: 'x'.repeat(256), content: 'C' },
      { title: 'T', content: 'y'.repeat(MAX_CONTENT_BYTES + 1) },
      { title: 'T', content: 'C', expiration_date: 'next tuesday' },
      { title: 'T', content: 'C', tags: 'not-a-list' },
      'not an object',
      { title: 'T', content: 'C', reference_id: 'stored-ref' },
    ];
    const memos = [memo(1, { reference_id: 'in-batch', tags: ['tides'], metadata: { port: 'Brest' } }), ...invalid, memo(2), memo(3, { reference_id: 'in-batch' })];
    const res = await batch(key, memos);
    expect(res.status, res.text).toBe(200);
    expect(res.body.ok).toBe(true);
    const results = res.body.results as Json[];
    expect(results).toHaveLength(memos.length);

    // Each refusal is what the same body alone gets from POST /api/v1/memo.
    for (const [i, body] of invalid.entries()) {
      const alone = await api('POST', '/api/v1/memo', key, body);
      expect(alone.status).toBeGreaterThanOrEqual(400);
      expect({ i, ...results[i + 1] }).toEqual({ i, ok: false, status: alone.status, error: alone.body.error });
    }
    expect(results.at(-1)).toEqual({ ok: false, status: 409, error: 'reference_id is already used by another memo in this project' });

    const [first, second] = [results[0]!, results[invalid.length + 1]!];
    for (const r of [first, second]) expect(r).toMatchObject({ ok: true, memo_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await count(key)).toBe(before + 2);
    // Read-your-writes for every created memo, by id and by reference id, as after POST.
    const read = await api('GET', `/api/v1/memo/${first.memo_uuid}`, key);
    expect(read.body).toMatchObject({ uuid: first.memo_uuid, title: 'Tide table 1', client_reference_id: 'in-batch', metadata: { port: 'Brest' }, pending: true });
    expect(read.body.tags[0]?.tag).toBe('tides');
    expect((await api('GET', '/api/v1/memo/in-batch?id_type=reference_id', key)).body.uuid).toBe(first.memo_uuid);
    expect((await api('GET', `/api/v1/memo/${second.memo_uuid}`, key)).body.content).toBe(memo(2).content);
  }, 60_000);

  it('refuses an envelope that is not { memos: [1..1000] } with a 400 and writes nothing', async () => {
    const before = await count(key);
    const text = 'The body must be { "memos": [ ... ] } with 1 to 1000 memos';
    for (const body of [{}, { memos: [] }, { memos: 'x' }, { memos: {} }, [memo(1)], { memos: [memo(1)], project: 'x' }, { memos: Array.from({ length: 1001 }, (_, i) => memo(i)) }]) {
      const res = await api('POST', '/api/v1/memo/batch', key, body);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: text } });
    }
    expect((await api('POST', '/api/v1/memo/batch', null, { memos: [memo(1)] })).status).toBe(401);
    expect(await count(key)).toBe(before);
  }, 60_000);

  it('creates each memo of a batch retried with its Idempotency-Key once, under the same ids', async () => {
    const { key: k } = await stack.project('batch-idempotent');
    const memos = Array.from({ length: 25 }, (_, i) => memo(i, { reference_id: `idem-${i}` }));
    const first = await batch(k, memos, { 'idempotency-key': 'import-42' });
    expect(first.status, first.text).toBe(200);
    const again = await batch(k, memos, { 'idempotency-key': 'import-42' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.results).toEqual(first.body.results);
    expect(first.body.results.every((r: Json) => r.ok)).toBe(true);
    expect(new Set(first.body.results.map((r: Json) => r.memo_uuid)).size).toBe(25);
    expect(await count(k)).toBe(25);
    for (const { memo_uuid } of first.body.results.slice(0, 3) as Json[]) {
      const history = await api('GET', `/api/v1/memo/${memo_uuid}/history`, k);
      expect(history.body.revisions.filter((r: Json) => r.event === 'MemoCreated')).toHaveLength(1);
    }
    const changed = await batch(k, [...memos.slice(1), memo(99)], { 'idempotency-key': 'import-42' });
    expect({ status: changed.status, body: changed.body }).toEqual({ status: 422, body: { error: 'Idempotency-Key was already used with a different request body' } });
    expect((await batch(k, memos, { 'idempotency-key': 'bad key with spaces' })).status).toBe(400);
    expect(await count(k)).toBe(25);
  }, 60_000);

  it('stamps each memo of a scoped key into its space and refuses, alone, the ones that contradict it', async () => {
    const user = (id: string) => ({ field: 'user_id', operator: 'eq', value: id, filter_type: 'custom_metadata' });
    const made = await api('POST', '/api/v1/project/keys', key, { name: 'u1 app', scopes: ['memos:read', 'memos:write'], filters: [user('u1')] });
    expect(made.status, made.text).toBe(200);
    const u1 = made.body.api_key as string;
    const res = await batch(u1, [memo(1), memo(2, { metadata: { user_id: 'u2' } }), memo(3, { metadata: { user_id: 'u1', desk: 'a' } })]);
    expect(res.status, res.text).toBe(200);
    const [stamped, refused, kept] = res.body.results as Json[];
    expect(refused).toEqual({ ok: false, status: 403, error: 'Access denied' });
    expect((await api('GET', `/api/v1/memo/${stamped!.memo_uuid}`, key)).body.metadata).toEqual({ user_id: 'u1' });
    expect((await api('GET', `/api/v1/memo/${kept!.memo_uuid}`, key)).body.metadata).toEqual({ user_id: 'u1', desk: 'a' });

    const reader = await api('POST', '/api/v1/project/keys', key, { name: 'reader', scopes: ['memos:read'] });
    const denied = await batch(reader.body.api_key as string, [memo(1)]);
    expect({ status: denied.status, body: denied.body }).toEqual({ status: 403, body: { error: 'Access denied' } });

    const trail = await eventually(async () => {
      const r = await api('GET', `/api/v1/audit?key_id=${made.body.key_id}&action=memo.create`, key);
      return r.body.results?.length >= 1 ? (r.body.results as Json[]) : undefined;
    }, 5_000);
    expect(trail[0]).toMatchObject({ action: 'memo.create', status: 200 });
    expect(new Set(trail[0]!.memo_ids)).toEqual(new Set([stamped!.memo_uuid, kept!.memo_uuid]));
  }, 60_000);

  it('takes 1,000 memos in one request, counting each against the rate limit and the batch against its body limit', async () => {
    const { key: k } = await stack.project('batch-thousand');
    const text = 'The harbour master logs each vessel, its draught and its berth, twice a day at the turn of the tide. '.repeat(15);
    const memos = Array.from({ length: 1000 }, (_, i) => ({ title: `Log ${i}`, content: `${i}: ${text}` }));
    const started = performance.now();
    const res = await batch(k, memos);
    const ms = performance.now() - started;
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.filter((r: Json) => r.ok)).toHaveLength(1000);
    console.log(`1,000-memo batch of ~${text.length} chars each answered in ${ms.toFixed(0)} ms`);
    expect(await count(k)).toBe(1000);
    expect(Number(res.headers['ratelimit-remaining'])).toBe(RATE_LIMIT - 1000);

    // Over the rest of the limit: the whole batch is 429, nothing written.
    const over = await batch(k, memos.slice(0, RATE_LIMIT - 1000 + 1).map((m) => ({ ...m, content: 'short' })));
    expect(over.status).toBe(429);
    expect(await count(k)).toBe(1000);

    // Over MEMEX_BATCH_BODY_LIMIT: 413 before anything is read into a memo.
    const big = await batch(k, Array.from({ length: 100 }, (_, i) => ({ title: `Big ${i}`, content: 'z'.repeat(BATCH_BODY_LIMIT / 90) })));
    expect({ status: big.status, body: big.body }).toEqual({ status: 413, body: { error: 'Request body is too large' } });
  }, 120_000);
});
