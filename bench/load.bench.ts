/**
 * Search and mixed load through the whole stack (HTTPS gateway → NATS → indexer / memo), as
 * `pnpm start` runs it: a project of `--memos` memos of ~1,500 characters (real prose), then
 *
 * - GET /api/v1/memo/{id} at 32 connections: the request/reply round trip alone, the anchor;
 * - POST /api/v1/search (hybrid, eval queries in turn) at 32 connections;
 * - a mixed load (search 40%, GET 40%, POST 20%) at 32 and at 200 connections;
 * - searches at 4 connections alone, then again while memos of ~1,500 characters are POSTed at
 *   `--ingest-rate` per second (what a search waits for behind ingestion: issue 13's item 4);
 *
 * each with req/s, p50/p99 and errors, beside issue 13's goals, and the CPU each process spent per
 * request (where the time goes; the load generator itself runs in this process). `--scale` is passed to `pnpm start`
 * (e.g. `--scale search=1`: a search-only indexer beside the one that indexes).
 *
 * `--compare VAR=value[,VAR=value]` measures a setting against the default on the same seeded data:
 * the loads run with the stack as started (A), then again after a restart with those variables (B),
 * `--rounds` times each, alternated (A B A B...), and a summary puts the rounds side by side. The
 * mixed loads' POSTs add memos as the rounds go, so later rounds search a few more chunks.
 * `--compare-scale` does the same for `pnpm start --scale` (e.g. `search=1`: B adds a search-only
 * indexer), alone or with `--compare`.
 *
 *   tsx bench/load.bench.ts [--memos 2000] [--duration 10] [--ingest-rate 100] [--scale search=1]
 *     [--compare INDEXER_SCAN_THREAD=true] [--compare-scale search=1] [--rounds 2]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Memo } from '@memex/contracts';
import { httpsJson } from '../test/support/https';
import { REPO_ROOT } from '../test/support/paths';
import { startProcessStack } from '../test/support/processStack';
import { connectNats } from '@memex/runtime';
import { describeEventLoop, readEventLoop } from './support/eventLoop';
import { formatLoad, load, type LoadResult } from './support/load';
import { cpuBetween, cpuSnapshot } from './support/processCpu';
import { memoTexts } from './support/memoTexts';
import { waitProcessed } from './support/processed';
import { pool, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '10' },
    scale: { type: 'string', default: '' },
    compare: { type: 'string', default: '' },
    'compare-scale': { type: 'string', default: '' },
    rounds: { type: 'string', default: '1' },
    'ingest-rate': { type: 'string', default: '100' },
  },
});
const MEMOS = Number(values.memos);
const durationS = Number(values.duration);
const ROUNDS = Number(values.rounds);
const INGEST_RATE = Number(values['ingest-rate']);
/** The variables of `--compare`, by name (none: one variant, the stack as started). */
const compared: Record<string, string> = Object.fromEntries(
  values.compare
    .split(',')
    .filter((pair) => pair.trim() !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`--compare takes VAR=value pairs separated by commas, not '${pair}'`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('--rounds takes a whole number from 1');

const queries = readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', 'vaswani', 'queries.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as { text: string }).text);
let nextQuery = 0;
const searchBody = () => JSON.stringify({ query: queries[nextQuery++ % queries.length], search_method: 'chunk_vector_search', limit: 10 });
let nextMemo = 0;
const memoBody = () => JSON.stringify({ title: `Load ${nextMemo}`, content: `Written under load, number ${nextMemo++}. It has a second sentence about fog signals.` });
// Full-size memos for the searches-while-ingesting phase (real prose, as the seeded ones).
const fullTexts = memoTexts(500, 1500);
let nextFull = 0;
const fullMemoBody = () => JSON.stringify({ title: `Ingested ${nextFull}`, content: fullTexts[nextFull++ % fullTexts.length] });

/** `pnpm start`'s arguments as the stack starts (A runs with them again after a restart for B). */
const startArgs = values.scale ? ['--scale', values.scale] : [];
const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', LOG_LEVEL: 'warn' }, startArgs);
try {
  const call = <T>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  const seedStarted = Date.now();
  const ids = await pool(
    memoTexts(MEMOS, 1500).map((content, i) => async () => {
      const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `Memo ${i}`, content });
      if (res.status !== 200) throw new Error(`POST failed: ${res.status} ${res.text}`);
      return res.body.memo_uuid;
    }),
    32,
  );
  const chunks = await waitProcessed(ids, (id) => call<Memo>('GET', `/api/v1/memo/${id}`), 50);
  console.log(`seeded ${MEMOS} memos (${chunks} chunks) in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);

  const nc = await connectNats({ url: stack.natsUrl, name: 'load-bench' });
  /** The indexer's event loop during `run`, one row for `rows`. */
  const watchingIndexer = async <T>(label: string, rows: [string, string][], run: () => Promise<T>): Promise<T> => {
    const before = await readEventLoop(nc, 'indexer');
    const result = await run();
    rows.push([label, describeEventLoop(before, await readEventLoop(nc, 'indexer'))]);
    return result;
  };
  const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
  const memoPath = `/api/v1/memo/${ids[0]}`;
  const search = { label: 'search', method: 'POST' as const, path: '/api/v1/search', body: searchBody };
  const get = { label: 'GET', method: 'GET' as const, path: memoPath };
  const post = { label: 'POST', method: 'POST' as const, path: '/api/v1/memo', body: memoBody };
  const mixed = [search, get, search, get, post];
  /** The stack's processes and this one (the load generator), for `cpuPerRequest`. */
  const cpuNow = () => ({ stack: cpuSnapshot(stack.process.pid!), generator: process.cpuUsage() });
  /**
   * The CPU milliseconds each process spent per request since `before`, as a row of `cpuRows` and by
   * process; the load generator's (autocannon, in this process) last, as it shares the same cores.
   */
  const cpuPerRequest = (label: string, before: ReturnType<typeof cpuNow>, requests: number, cpuRows: [string, string][]) => {
    const generator = process.cpuUsage(before.generator);
    const perRequest = cpuBetween(before.stack, cpuSnapshot(stack.process.pid!)).map(([name, seconds]): [string, number] => [name, (1000 * seconds) / requests]);
    perRequest.push(['load generator', (generator.user + generator.system) / 1000 / requests]);
    cpuRows.push([label, perRequest.map(([name, ms]) => `${name} ${ms.toFixed(2)}`).join(', ')]);
    return new Map(perRequest);
  };
  /** One load, with the CPU milliseconds each process of the stack spent per request. */
  const measured = async (label: string, requests: Parameters<typeof load>[1]['requests'], connections: number, cpuRows: [string, string][]) => {
    const before = cpuNow();
    const result = await load(label, { url: stack.base, headers, requests, connections, durationS });
    return { result, cpu: cpuPerRequest(label, before, result.requestsPerSecond * durationS, cpuRows) };
  };
  /**
   * Searches at 4 connections while full-size memos are POSTed at INGEST_RATE per second, then one
   * more memo waited for until processed (so the next load does not meet this one's backlog).
   */
  const whileIngesting = async (label: string, cpuRows: [string, string][]) => {
    const before = cpuNow();
    const [searches, posts] = await Promise.all([
      load(label, { url: stack.base, headers, requests: [search], connections: 4, durationS }),
      load('POST', { url: stack.base, headers, requests: [{ label: 'POST', method: 'POST', path: '/api/v1/memo', body: fullMemoBody }], connections: 8, durationS, overallRate: INGEST_RATE }),
    ]);
    const cpu = cpuPerRequest(`${label} (per search)`, before, searches.requestsPerSecond * durationS, cpuRows);
    const drainStarted = Date.now();
    await settle();
    const posted = Math.round(posts.requestsPerSecond * durationS);
    const kind = `POSTs meanwhile (${posted} memos; their backlog processed ${((Date.now() - drainStarted) / 1000).toFixed(1)} s after)`;
    return { result: { ...searches, byKind: [{ kind, count: posted, p50: posts.p50, p99: posts.p99 }] }, cpu };
  };
  /** Waits until what earlier loads wrote is processed: one more memo, processed (the consumers take them in order). */
  const settle = async () => {
    const marker = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: 'After the writes', content: fullTexts[0] });
    await waitProcessed([marker.body.memo_uuid], (id) => call<Memo>('GET', `/api/v1/memo/${id}`), 50);
  };
  /** The loads on the stack as it runs now, printed under `title`. */
  const suite = async (title: string) => {
    const cpuRows: [string, string][] = [];
    const loopRows: [string, string][] = [];
    const runs: [Awaited<ReturnType<typeof measured>>, string][] = [
      [await measured('anchor: GET /api/v1/memo/{id}, c=32', [get], 32, cpuRows), ''],
      [await measured('search, c=32', [search], 32, cpuRows), 'goal ≥ 1,000 req/s, p99 ≤ 50 ms'],
      [await measured('mixed 40% search / 40% GET / 20% POST, c=32', mixed, 32, cpuRows), ''],
      [await measured('mixed, c=200', mixed, 200, cpuRows), 'goal p99 ≤ 250 ms, no errors'],
      // (on a stack done with what the mixed loads wrote)
      [await settle().then(() => watchingIndexer('search, c=4', loopRows, () => measured('search, c=4', [search], 4, cpuRows))), ''],
      [
        await watchingIndexer('search, c=4, while ingesting', loopRows, () => whileIngesting(`search, c=4, while memos of ~1,500 chars are POSTed at ${INGEST_RATE}/s`, cpuRows)),
        'no search waits behind ingestion',
      ],
    ];
    const anchor = runs[0]![0].result.requestsPerSecond;
    printTable(
      `${title}, ${durationS} s each (2 cores shared by the load generator and every process)`,
      runs.flatMap(([{ result: r }, goal], i): [string, string][] => [
        [r.label, `${formatLoad(r)}   ${i === 0 ? '' : `${((r.requestsPerSecond / anchor) * 100).toFixed(0)}% of the anchor`}${goal ? `   (${goal})` : ''}`],
        ...(r.byKind ?? []).map((k): [string, string] => [`  ${k.kind}`, `${String(k.count).padStart(6)} answered  p50 ${k.p50.toFixed(1).padStart(5)} ms   p99 ${k.p99.toFixed(1).padStart(6)} ms`]),
      ]),
    );
    printTable('CPU per request, ms, by process', cpuRows);
    printTable("The indexer's event loop (memex_event_loop_*: a timer due every 10 ms, how late it ran)", loopRows);
    return runs.map(([run]) => run);
  };
  const title = `HTTPS load on ${chunks} chunks (${MEMOS} memos)${values.scale ? `, --scale ${values.scale}` : ''}`;
  const comparedScale = values['compare-scale'];
  const bName = [values.compare, comparedScale && `--scale ${comparedScale}`].filter(Boolean).join(', ');
  const variants: { name: string; env: Record<string, string>; args?: string[] }[] =
    bName === ''
      ? [{ name: 'A', env: {} }]
      : [
          { name: 'A (as started)', env: {}, args: startArgs },
          { name: `B (${bName})`, env: compared, ...(comparedScale ? { args: ['--scale', comparedScale] } : {}) },
        ];
  const summary: [string, string][] = [];
  let running = variants[0]!;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of variants) {
      if (variant !== running) {
        await stack.restart(variant.env, variant.args);
        running = variant;
      }
      const label = variants.length > 1 || ROUNDS > 1 ? `${variant.name}, round ${round}` : '';
      const [anchor, alone, mixed32, mixed200, few, ingesting] = await suite(label ? `${title}, ${label}` : title);
      const share = (r: LoadResult) => `${r.requestsPerSecond.toFixed(0)} req/s (${((r.requestsPerSecond / anchor!.result.requestsPerSecond) * 100).toFixed(0)}%) p99 ${r.p99.toFixed(0)} ms`;
      if (label) {
        summary.push([
          label,
          `anchor ${anchor!.result.requestsPerSecond.toFixed(0)} | search ${share(alone!.result)}, indexer ${(alone!.cpu.get('indexer') ?? 0).toFixed(2)} ms | mixed c=32 ${share(mixed32!.result)} | c=200 ${share(mixed200!.result)}, errors ${mixed200!.result.errors} | search c=4 p50/p99 ${few!.result.p50.toFixed(1)}/${few!.result.p99.toFixed(1)} ms, while ingesting ${ingesting!.result.p50.toFixed(1)}/${ingesting!.result.p99.toFixed(1)} ms`,
        ]);
      }
    }
  }
  if (summary.length > 0) printTable('Rounds side by side (req/s, share of the GET anchor, p99; indexer CPU per search)', summary);
  const deaths = stack.output().split('\n').filter((l) => /\[memex\] .*exited|nhandled|uncaught/i.test(l));
  if (deaths.length > 0) console.error(`\nservices died during the run:\n${stack.output()}`);
  await nc.close();
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
