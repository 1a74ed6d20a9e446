/**
 * Search and mixed load through the whole stack (HTTPS gateway → NATS → indexer / memo), as
 * `pnpm start` runs it: a project of `--memos` memos of ~1,500 characters (real prose), then
 *
 * - GET /api/v1/memo/{id} at 32 connections: the request/reply round trip alone, the anchor;
 * - POST /api/v1/search (hybrid, eval queries in turn) at 32 connections;
 * - a mixed load (search 40%, GET 40%, POST 20%) at 32 and at 200 connections;
 *
 * each with req/s, p50/p99 and errors, beside issue 13's goals, and the CPU each process spent per
 * request (where the time goes; the load generator itself runs in this process). `--scale` is passed to `pnpm start`
 * (e.g. `--scale search=1`: a search-only indexer beside the one that indexes).
 *
 * `--compare VAR=value[,VAR=value]` measures a setting against the default on the same seeded data:
 * the loads run with the stack as started (A), then again after a restart with those variables (B),
 * `--rounds` times each, alternated (A B A B...), and a summary puts the rounds side by side. The
 * mixed loads' POSTs add memos as the rounds go, so later rounds search a few more chunks.
 *
 *   tsx bench/load.bench.ts [--memos 2000] [--duration 10] [--scale search=1] [--compare INDEXER_SCAN_THREAD=true] [--rounds 2]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Memo } from '@memex/contracts';
import { httpsJson } from '../test/support/https';
import { REPO_ROOT } from '../test/support/paths';
import { startProcessStack } from '../test/support/processStack';
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
    rounds: { type: 'string', default: '1' },
  },
});
const MEMOS = Number(values.memos);
const durationS = Number(values.duration);
const ROUNDS = Number(values.rounds);
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

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', LOG_LEVEL: 'warn' }, values.scale ? ['--scale', values.scale] : []);
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

  const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
  const memoPath = `/api/v1/memo/${ids[0]}`;
  const search = { label: 'search', method: 'POST' as const, path: '/api/v1/search', body: searchBody };
  const get = { label: 'GET', method: 'GET' as const, path: memoPath };
  const post = { label: 'POST', method: 'POST' as const, path: '/api/v1/memo', body: memoBody };
  const mixed = [search, get, search, get, post];
  /** One load, with the CPU milliseconds each process of the stack spent per request. */
  const measured = async (label: string, requests: Parameters<typeof load>[1]['requests'], connections: number, cpuRows: [string, string][]) => {
    const before = cpuSnapshot(stack.process.pid!);
    const result = await load(label, { url: stack.base, headers, requests, connections, durationS });
    const total = result.requestsPerSecond * durationS;
    const cpu = cpuBetween(before, cpuSnapshot(stack.process.pid!));
    cpuRows.push([label, cpu.map(([name, seconds]) => `${name} ${((1000 * seconds) / total).toFixed(2)}`).join(', ')]);
    return { result, cpu: new Map(cpu.map(([name, seconds]) => [name, (1000 * seconds) / total])) };
  };
  /** The four loads on the stack as it runs now, printed under `title`. */
  const suite = async (title: string) => {
    const cpuRows: [string, string][] = [];
    const runs: [Awaited<ReturnType<typeof measured>>, string][] = [
      [await measured('anchor: GET /api/v1/memo/{id}, c=32', [get], 32, cpuRows), ''],
      [await measured('search, c=32', [search], 32, cpuRows), 'goal ≥ 1,000 req/s, p99 ≤ 50 ms'],
      [await measured('mixed 40% search / 40% GET / 20% POST, c=32', mixed, 32, cpuRows), ''],
      [await measured('mixed, c=200', mixed, 200, cpuRows), 'goal p99 ≤ 250 ms, no errors'],
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
    return runs.map(([run]) => run);
  };
  const title = `HTTPS load on ${chunks} chunks (${MEMOS} memos)${values.scale ? `, --scale ${values.scale}` : ''}`;
  const variants = Object.keys(compared).length === 0 ? [{ name: 'A', env: {} }] : [{ name: 'A (as started)', env: {} }, { name: `B (${values.compare})`, env: compared }];
  const summary: [string, string][] = [];
  let running = variants[0]!;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of variants) {
      if (variant !== running) {
        await stack.restart(variant.env);
        running = variant;
      }
      const label = variants.length > 1 || ROUNDS > 1 ? `${variant.name}, round ${round}` : '';
      const [anchor, alone, mixed32, mixed200] = await suite(label ? `${title}, ${label}` : title);
      const share = (r: LoadResult) => `${r.requestsPerSecond.toFixed(0)} req/s (${((r.requestsPerSecond / anchor!.result.requestsPerSecond) * 100).toFixed(0)}%) p99 ${r.p99.toFixed(0)} ms`;
      if (label) {
        summary.push([
          label,
          `anchor ${anchor!.result.requestsPerSecond.toFixed(0)} | search ${share(alone!.result)}, indexer ${(alone!.cpu.get('indexer') ?? 0).toFixed(2)} ms | mixed c=32 ${share(mixed32!.result)} | c=200 ${share(mixed200!.result)}, errors ${mixed200!.result.errors}`,
        ]);
      }
    }
  }
  if (summary.length > 0) printTable('Rounds side by side (req/s, share of the GET anchor, p99; indexer CPU per search)', summary);
  const deaths = stack.output().split('\n').filter((l) => /\[memex\] .*exited|nhandled|uncaught/i.test(l));
  if (deaths.length > 0) console.error(`\nservices died during the run:\n${stack.output()}`);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
