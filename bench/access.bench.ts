/**
 * What scoped access costs: GET-by-id and search at c=32 through the whole stack (HTTPS gateway →
 * NATS → services, as `pnpm start` runs it), as the owner key and as a scoped key whose space holds
 * the memo (and every other: the same hits), in one run on one machine, and their ratio. The owner key's calls are audited too, so
 * the ratio is the cost of the scope check, the space ANDed into the filters and the space check
 * in the memo service (every authenticated call is audited, so the audit write is on both sides). A
 * space makes the indexer take its filtered path, which on a small project can be faster than the
 * unfiltered one: compare GET-by-id for the check alone.
 *
 *   tsx bench/access.bench.ts [--duration 10] [--connections 32] [--memos 200]
 */
import { parseArgs } from 'node:util';
import { eventually } from '@memex/testing';
import { httpsJson } from '../test/support/https';
import { startProcessStack } from '../test/support/processStack';
import { formatLoad, load, type LoadResult } from './support/load';
import { printTable } from './support/stats';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '32' }, memos: { type: 'string', default: '200' } } });
const durationS = Number(values.duration);
const connections = Number(values.connections);
const memoCount = Number(values.memos);

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', LOG_LEVEL: 'warn' });
try {
  const call = <T>(method: string, path: string, body?: unknown, key = stack.key) => httpsJson<T>(method, `${stack.base}${path}`, { key, ca: stack.ca, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  // Half the memos for user u1, half for u2; the scoped key's space holds both, so both keys find the
  // same memos and the difference is what checking the space costs, not a smaller search.
  let target = '';
  for (let i = 0; i < memoCount; i++) {
    const user = i % 2 === 0 ? 'u1' : 'u2';
    const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', {
      title: `Field report ${i}`,
      content: `Report ${i} for ${user}: the otter survey counted ${i % 17} animals near the river bend, and the weather held.`,
      metadata: { user_id: user },
    });
    if (i === 0) target = res.body.memo_uuid;
  }
  await eventually(async () => ((await call<{ pending: boolean }>('GET', `/api/v1/memo/${target}`)).body.pending ? undefined : true), 120_000);
  const scoped = await call<{ api_key: string }>('POST', '/api/v1/project/keys', {
    name: 'bench u1+u2',
    scopes: ['memos:read', 'search'],
    filters: [{ field: 'user_id', operator: 'in', value: ['u1', 'u2'], filter_type: 'custom_metadata' }],
  });
  const keys = { owner: stack.key, scoped: scoped.body.api_key };
  const search = JSON.stringify({ query: 'otter survey river', search_method: 'chunk_vector_search', limit: 10 });
  const rows: [string, string][] = [];
  const results: Record<string, LoadResult> = {};
  // ABBA order, so warm-up and drift over the run fall on both alike.
  for (const [what, request] of [
    ['GET /api/v1/memo/{id}', { url: `${stack.base}/api/v1/memo/${target}` }],
    ['POST /api/v1/search', { url: `${stack.base}/api/v1/search`, method: 'POST' as const, body: search }],
  ] as const) {
    for (const who of ['owner', 'scoped', 'scoped', 'owner'] as const) {
      const r = await load(`${what} as ${who}`, { ...request, headers: { authorization: `Bearer ${keys[who]}`, 'content-type': 'application/json' }, connections, durationS: durationS / 2 });
      const name = `${what} as ${who}`;
      const prev = results[name];
      results[name] = prev ? { ...r, requestsPerSecond: (prev.requestsPerSecond + r.requestsPerSecond) / 2 } : r;
    }
    const owner = results[`${what} as owner`]!;
    const mine = results[`${what} as scoped`]!;
    rows.push([owner.label, formatLoad(owner)], [mine.label, `${formatLoad(mine)}   = ${((mine.requestsPerSecond / owner.requestsPerSecond) * 100).toFixed(1)}% of the owner key`]);
  }
  printTable(`HTTPS, ${connections} connections, ${durationS} s per row in two halves, ${memoCount} memos (2 cores shared by the load generator and every process)`, rows);
} finally {
  await stack.stop();
}
