/**
 * The fuzz suite (issue 9): for every route, thousands of generated bodies, query strings and path
 * ids — wrong types, huge strings, lone surrogates, `__proto__`/`constructor` keys, deep nesting and
 * truncated JSON — through the Fastify app over a real stack on NATS. Never a 5xx; every 4xx is
 * exactly `{ error: string }`; memos stored before are unchanged afterwards. Seeded: a failure
 * prints its seed and path, and replays.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../test/support/stack';
import { memoApi } from '../../../test/support/api';

const RUNS = Number(process.env.MEMEX_FUZZ_RUNS ?? 2_000);
const SEED = Number(process.env.MEMEX_FUZZ_SEED ?? 20261123);

// Strings that hurt: lone surrogates, control characters, JSON-special characters, huge ones.
const nastyString = fc.oneof(
  { weight: 30, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 12, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 12, arbitrary: fc.constantFrom('\uD800', '\uDFFF', 'a\uDC00b', '\uD83D', '\u0000', '\r\n', '"', '\\', '%', '%E0%A4%A', '../..', '') },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(300_000), '"'.repeat(100_000), '🙂'.repeat(50_000), ' '.repeat(1_000)) },
);
const nastyKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'a\nb', 'c\rd', ''));
const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 50, 51, 100, 101, 1e308, -1e308, 2 ** 53 + 1, Number("922337203685477581")),
);
const leaf = fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null));
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(nastyKey, tie('v'), { maxKeys: 4 })),
})).v;

/** JSON text this deep cannot come from JSON.stringify of a generated value (stack), so it is spelled. */
const deepJson = fc.tuple(fc.integer({ min: 30, max: 20_000 }), fc.boolean()).map(([n, obj]) => (obj ? '{"a":'.repeat(n) + '1' + '}'.repeat(n) : '['.repeat(n) + '1' + ']'.repeat(n)));

/** A body for a route with these fields: mostly the right keys with wrong or right values, sometimes anything. */
function body(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const known = Object.keys(fields);
  const object = fc
    .tuple(
      fc.subarray(known),
      fc.record(Object.fromEntries(known.map((k) => [k, fc.oneof({ weight: 3, arbitrary: fields[k]! }, { weight: 1, arbitrary: value })]))),
      fc.dictionary(nastyKey, value, { maxKeys: 2 }),
      fc.boolean(),
      fc.option(fc.tuple(fc.constantFrom(...known, 'metadata', 'filters'), deepJson), { nil: undefined }),
    )
    .map(([keys, values, extra, withExtra, deep]) => {
      const picked: Record<string, unknown> = {};
      for (const k of keys) picked[k] = (values as Record<string, unknown>)[k];
      let text = JSON.stringify(withExtra ? { ...picked, ...extra } : picked);
      if (deep) text = text === '{}' ? `{"${deep[0]}":${deep[1]}}` : `{"${deep[0]}":${deep[1]},${text.slice(1)}`;
      return text;
    });
  return fc.oneof(
    { weight: 6, arbitrary: object },
    { weight: 1, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
    // Truncated JSON: a valid body cut anywhere.
    { weight: 2, arbitrary: fc.tuple(object, fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(1, t.length))) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '[', 'null', '"x"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '\uFEFF{}') },
  );
}

const filter = fc.record({
  field: fc.oneof(fc.constantFrom('title', 'source', 'tags', 'client_reference_id', 'region'), nastyString),
  operator: fc.oneof(fc.constantFrom('eq', 'neq', 'contains', 'startswith', 'endswith', 'in', 'not_in'), nastyString),
  value: fc.oneof(nastyString, fc.array(nastyString, { maxLength: 5 }), value),
  filter_type: fc.oneof(fc.constantFrom('native_field', 'custom_metadata'), value),
});
const filters = fc.oneof(fc.array(fc.oneof(filter, value), { maxLength: 4 }), value);
const metadata = fc.oneof(fc.dictionary(nastyKey, value, { maxKeys: 6 }), value);
const memoFields = {
  title: nastyString,
  content: nastyString,
  metadata,
  reference_id: nastyString,
  client_reference_id: nastyString,
  tags: fc.oneof(fc.array(nastyString, { maxLength: 5 }), value),
  source: nastyString,
  type: nastyString,
  expiration_date: fc.oneof(fc.constantFrom('2030-01-01', '2025-02-30', '2030-01-01T00:00:00Z', 'tomorrow'), nastyString),
};
const pathId = fc.oneof(fc.uuid().map(String), nastyString.filter((s) => s.length < 2_000), fc.constantFrom('..', '%00', '%E0%A4%A', 'a/b'));
const queryValue = fc.oneof(nastyString.filter((s) => s.length < 2_000), nastyNumber.map(String), fc.constantFrom('reference_id', 'memo_uuid', '1', '0', '-1', '9'.repeat(400)));
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[\uD800-\uDFFF]/g, '%ED%A0%80');
  }
};
const rawOrEncoded = (s: string, raw: boolean) => (raw ? s.replace(/[\s#?/]/g, '') : enc(s));

describe('fuzz: every route, generated hostile input, over a real stack', () => {
  let stack: Stack;
  let key: string;
  let stored: Array<{ id: string; memo: unknown }>;
  const seen: Record<string, { runs: number; status: Record<string, number> }> = {};

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0', MEMEX_AUTH_FAILURE_LIMIT: '0', MEMEX_CONSISTENCY_TIMEOUT_MS: '0' } });
    ({ key } = await stack.project('fuzz'));
    const api = memoApi(stack.app, key);
    stored = [];
    for (const [i, body] of [
      { title: 'Harbour', content: 'Ships unload at the cranes.', reference_id: 'keep-1', metadata: { region: 'north', 'a\nb': [1, { c: null }] }, tags: ['ops'] },
      { title: 'Tides', content: 'The tide turns twice a day. "Quoted" \u00e9 🙂', reference_id: 'keep-2' },
    ].entries()) {
      const id = await api.create(body);
      stored.push({ id, memo: await api.processed(id, 20_000) });
      expect(i).toBeGreaterThanOrEqual(0);
    }
  }, 120_000);

  afterAll(async () => {
    // The figures for the record: runs and statuses per route.
    console.log(`fuzz (seed ${SEED}):\n${Object.entries(seen).map(([r, s]) => `  ${r}: ${s.runs} runs, statuses ${JSON.stringify(s.status)}`).join('\n')}`);
    await stack?.stop();
  });

  type Req = { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: string; auth?: string };
  const authHeader = fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('', 'Bearer', 'Bearer mxp_nope', 'Basic abc', 'Bearer \u00ff') });

  async function check(route: string, req: Req): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: req.auth ?? `Bearer ${key}` };
    const res = await stack.app.inject({ method: req.method, url: req.url, headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
    const s = (seen[route] ??= { runs: 0, status: {} });
    s.runs += 1;
    s.status[res.statusCode] = (s.status[res.statusCode] ?? 0) + 1;
    if (res.statusCode >= 500) throw new Error(`${req.method} ${req.url.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}\nbody: ${req.payload?.slice(0, 300)}`);
    if (res.statusCode >= 400) {
      const parsed = res.json() as Record<string, unknown>;
      if (Object.keys(parsed).length !== 1 || typeof parsed.error !== 'string' || parsed.error === '') {
        throw new Error(`${req.method} ${req.url.slice(0, 200)} → ${res.statusCode} with body ${res.body.slice(0, 300)}`);
      }
    }
  }

  const run = (route: string, arbitrary: fc.Arbitrary<Req>) =>
    fc.assert(fc.asyncProperty(arbitrary, (req) => check(route, req)), { numRuns: RUNS, seed: SEED, endOnFailure: true });

  it('POST /api/v1/memo', async () => {
    await run('POST /api/v1/memo', fc.record({ method: fc.constant('POST' as const), url: fc.oneof(fc.constant('/api/v1/memo'), queryValue.map((q) => `/api/v1/memo?project_id=${enc(q)}`)), payload: body(memoFields), auth: authHeader }));
  }, 180_000);

  it('GET, PATCH and DELETE /api/v1/memo/:memo_id', async () => {
    const url = fc.tuple(pathId, fc.option(queryValue, { nil: undefined }), fc.boolean()).map(([id, idType, raw]) => `/api/v1/memo/${rawOrEncoded(id, raw) || 'x'}${idType === undefined ? '' : `?id_type=${enc(idType)}`}`);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      await run(`${method} /api/v1/memo/:id`, fc.record({ method: fc.constant(method), url, payload: method === 'PATCH' ? body(memoFields) : fc.constant(undefined), auth: authHeader }).map((r) => (r.payload === undefined ? { method: r.method, url: r.url, auth: r.auth } : r)));
    }
  }, 300_000);

  it('POST /api/v1/search', async () => {
    const fields = { query: nastyString, search_method: fc.oneof(fc.constantFrom('title_contains', 'title_startswith', 'chunk_vector_search'), nastyString), limit: nastyNumber, filters, project_id: nastyString };
    await run('POST /api/v1/search', fc.record({ method: fc.constant('POST' as const), url: fc.constant('/api/v1/search'), payload: body(fields), auth: authHeader }));
  }, 180_000);

  it('POST /api/v1/chat and /api/v1/generate', async () => {
    const common = { filters, project_id: nastyString, stream: fc.oneof(fc.boolean(), value) };
    await run('POST /api/v1/chat', fc.record({ method: fc.constant('POST' as const), url: fc.constant('/api/v1/chat'), payload: body({ ...common, query: nastyString, system_prompt: nastyString, chat_id: fc.oneof(fc.uuid().map(String), nastyString) }), auth: authHeader }));
    await run('POST /api/v1/generate', fc.record({ method: fc.constant('POST' as const), url: fc.constant('/api/v1/generate'), payload: body({ ...common, prompt: nastyString, rules: nastyString }), auth: authHeader }));
  }, 300_000);

  it('GET /api/v1/chat and /api/v1/chat/:chat_uuid', async () => {
    const list = fc.tuple(fc.option(queryValue, { nil: undefined }), fc.option(queryValue, { nil: undefined }), fc.boolean()).map(([page, size, twice]) => {
      const q = [page !== undefined ? `page=${enc(page)}` : '', size !== undefined ? `page_size=${enc(size)}` : '', twice ? 'page=1' : ''].filter(Boolean).join('&');
      return `/api/v1/chat${q ? `?${q}` : ''}`;
    });
    await run('GET /api/v1/chat', fc.record({ method: fc.constant('GET' as const), url: list, auth: authHeader }));
    const one = fc.tuple(pathId, fc.boolean()).map(([id, raw]) => `/api/v1/chat/${rawOrEncoded(id, raw) || 'x'}`);
    await run('GET /api/v1/chat/:id', fc.record({ method: fc.constant('GET' as const), url: one, auth: authHeader }));
  }, 180_000);

  it('left the memos stored before unchanged', async () => {
    const api = memoApi(stack.app, key);
    for (const { id, memo } of stored) expect(await api.get(id)).toEqual(memo);
  });
});
