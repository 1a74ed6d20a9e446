/**
 * Ingestion: memos/s and chunks/s from POST to `pending: false` through the whole stack (as
 * `pnpm start` runs it: separate processes, HTTPS), beside the embedder's raw sentences/s measured
 * in the same run, and the NATS messages each service sent and got per memo (nats-server's
 * monitoring, which the stack under test turns on with MEMEX_NATS_MONITOR_PORT; the bench's own GETs
 * that wait for `pending: false` are among them).
 *
 * Then one large memo (`--large-chars`, 2,000,000: ~2,000 chunks; 0 skips it) is POSTed while two
 * clients search without pause, as they did for a few seconds before: how long it takes to
 * `pending: false`, the searches' latency before and during, and the indexer's and the gateway's
 * event loops during (what a search waits for behind one large document: issue 13's item 4).
 *
 *   tsx bench/ingest.bench.ts [--memos 2000] [--chars 1500] [--concurrency 32] [--large-chars 2000000] [--profile <dir>]
 *
 * `--profile <dir>` writes a V8 CPU profile of each service process there when the stack stops
 * (open in Chrome DevTools, or summarize with `tsx bench/support/profile.ts <dir>`).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Memo } from '@memex/contracts';
import { DEFAULT_EMBEDDING_MODEL } from '../services/indexer/src/embedding/embedder';
import { measureEmbedder } from '../services/indexer/src/embedding/measure';
import { REPO_ROOT } from '../test/support/paths';
import { freePort } from '@memex/testing';
import { startProcessStack, type ProcessStack } from '../test/support/processStack';
import { connectNats } from '@memex/runtime';
import { describeEventLoop, readEventLoop } from './support/eventLoop';
import { httpsJson } from '../test/support/https';
import { cpuBetween, cpuSnapshot } from './support/processCpu';
import { embedderAloneMemosPerSecond } from './support/embedderAlone';
import { memoTexts } from './support/memoTexts';
import { waitProcessed } from './support/processed';
import { percentile, pool, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '2000' },
    chars: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '32' },
    'large-chars': { type: 'string', default: '2000000' },
    profile: { type: 'string' },
  },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const CONCURRENCY = Number(values.concurrency);
const LARGE_CHARS = Number(values['large-chars']);
/** The services a search passes through, whose event loops the large memo's row shows. */
const WATCHED = ['indexer', 'gateway'] as const;
/** Clients searching without pause around the large memo. */
const SEARCHERS = 2;
/** What the searchers ask: the openings of real abstracts. */
const searchQueries = memoTexts(64, 60).map((t) => t.slice(0, 60));
type Call = <T = unknown>(method: string, url: string, body?: unknown) => ReturnType<typeof httpsJson<T>>;


const embedder = await measureEmbedder({
  load: { model: DEFAULT_EMBEDDING_MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false },
  sentences: 6400,
});
console.log(`embedder: ${embedder.sentencesPerSecond.toFixed(0)} sentences/s raw (batch ${embedder.batchSize}, ~${embedder.meanWordsPerSentence.toFixed(0)} words each)`);

const profileDir = values.profile ? path.resolve(values.profile) : undefined;
const alone = await embedderAloneMemosPerSecond(memoTexts(MEMOS, CHARS));
console.log(`embedder alone on these memos: ${alone.toFixed(0)} memos/s`);

const monitorPort = await freePort();
const stack = await startProcessStack({
  MEMEX_RATE_LIMIT: '0',
  MEMEX_NATS_MONITOR_PORT: String(monitorPort),
  ...(profileDir ? { MEMEX_NODE_FLAGS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
});
try {
  const texts = memoTexts(MEMOS, CHARS);
  const call: Call = (method, url, body) =>
    httpsJson(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });

  const cpuBefore = stack.process.pid ? cpuSnapshot(stack.process.pid) : new Map();
  const natsBefore = await natsTraffic(monitorPort);
  const started = Date.now();
  const postLatencies: number[] = [];
  const ids = await pool(texts.map((content, i) => async () => {
    const t = performance.now();
    const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `Memo ${i}`, content });
    postLatencies.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`POST failed: ${res.status} ${res.text}`);
    return res.body.memo_uuid;
  }), CONCURRENCY);
  const posted = Date.now();

  const chunks = await waitProcessed(ids, (id) => call<Memo>('GET', `/api/v1/memo/${id}`));
  const done = Date.now();
  const natsAfter = await natsTraffic(monitorPort);
  const seconds = (done - started) / 1000;
  // CPU per memo is steadier than memos/s when other work shares the machine.
  const cpu = stack.process.pid ? cpuBetween(cpuBefore, cpuSnapshot(stack.process.pid)) : [];
  const cpuTotal = cpu.reduce((sum, [, s]) => sum + s, 0);
  printTable(`ingestion of ${MEMOS} memos of ~${CHARS} chars (concurrency ${CONCURRENCY}), whole stack over HTTPS`, [
    ['POST phase', `${((posted - started) / 1000).toFixed(1)} s, ${(MEMOS / ((posted - started) / 1000)).toFixed(0)} memos/s, p50 ${percentile(postLatencies, 50).toFixed(1)} ms, p99 ${percentile(postLatencies, 99).toFixed(1)} ms`],
    ['POST → all pending:false', `${seconds.toFixed(1)} s`],
    ['throughput', `${(MEMOS / seconds).toFixed(1)} memos/s, ${(chunks / seconds).toFixed(1)} chunks/s (${chunks} chunks)`],
    ['embedder raw (same run)', `${embedder.sentencesPerSecond.toFixed(0)} sentences/s; on these memos alone ${alone.toFixed(0)} memos/s (ratio ${(MEMOS / seconds / alone).toFixed(2)})`],
    ['NATS messages per memo', perMemo(natsBefore, natsAfter, MEMOS)],
    ['stack CPU per memo', `${((1000 * cpuTotal) / MEMOS).toFixed(2)} ms (${cpu.map(([n, s]) => `${n} ${((1000 * s) / MEMOS).toFixed(2)}`).join(', ')})`],
  ]);
  // A service that died and restarted mid-run spoils the figures (and is a bug): say so.
  const deaths = stack.output().split('\n').filter((l) => /\[memex\] .*exited|nhandled|uncaught/i.test(l));
  if (deaths.length > 0) console.error(`\nservices died during the run:\n${stack.output()}`);

  if (LARGE_CHARS > 0) await largeMemo(stack, call);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}

/** Searches at `SEARCHERS` clients without pause until `until` resolves: each one's latency, in ms. */
async function searchUntil(call: Call, until: Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  await Promise.all(
    Array.from({ length: SEARCHERS }, async (_, c) => {
      for (let i = c; !done; i += SEARCHERS) {
        const t = performance.now();
        const res = await call('POST', '/api/v1/search', { query: searchQueries[i % searchQueries.length], search_method: 'chunk_vector_search', limit: 10 });
        if (res.status !== 200) throw new Error(`search failed: ${res.status} ${res.text}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return latencies;
}
function describeLatencies(ms: readonly number[], seconds: number): string {
  return `${ms.length} searches, ${(ms.length / seconds).toFixed(0)}/s, p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(0)} ms`;
}

/** One memo of `LARGE_CHARS` POSTed while searches run (see the header). */
async function largeMemo(stack: ProcessStack, call: Call): Promise<void> {
  const [content] = memoTexts(1, LARGE_CHARS);
  const nc = await connectNats({ url: stack.natsUrl, name: 'ingest-bench' });
  try {
    const before = await searchUntil(call, new Promise((r) => setTimeout(r, 3000)));
    const loopBefore = await Promise.all(WATCHED.map((service) => readEventLoop(nc, service)));
    const cpuBefore = stack.process.pid ? cpuSnapshot(stack.process.pid) : new Map();
    const started = performance.now();
    const indexed = (async () => {
      const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: 'One large memo', content });
      if (res.status !== 200) throw new Error(`POST failed: ${res.status} ${res.text}`);
      // (polled twice a second: each GET carries the whole content and chunk list)
      return waitProcessed([res.body.memo_uuid], (id) => call<Memo>('GET', `/api/v1/memo/${id}`), 500);
    })();
    const during = await searchUntil(call, indexed);
    const chunks = await indexed;
    const seconds = (performance.now() - started) / 1000;
    const loopAfter = await Promise.all(WATCHED.map((service) => readEventLoop(nc, service)));
    const cpu = stack.process.pid ? cpuBetween(cpuBefore, cpuSnapshot(stack.process.pid)) : [];
    printTable(`one memo of ${content!.length} chars POSTed while ${SEARCHERS} clients search (issue 13 item 4: no search waits behind it)`, [
      ['POST → pending:false', `${seconds.toFixed(1)} s, ${chunks} chunks (${(chunks / seconds).toFixed(0)} chunks/s)`],
      ['searches for 3 s before', describeLatencies(before, 3)],
      ['searches meanwhile', describeLatencies(during, seconds)],
      ...WATCHED.map((service, i): [string, string] => [`${service} event loop meanwhile`, describeEventLoop(loopBefore[i]!, loopAfter[i]!)]),
      ['CPU meanwhile', cpu.map(([n, s]) => `${n} ${s.toFixed(2)} s`).join(', ')],
    ]);
  } finally {
    await nc.close();
  }
}

interface Traffic {
  in: number;
  out: number;
  inBytes: number;
  outBytes: number;
}

/**
 * Messages and bytes each service's connections sent to NATS (`in`, as the server counts) and got
 * from it (`out`), summed by service, from nats-server's /connz (open connections).
 */
async function natsTraffic(port: number): Promise<Map<string, Traffic>> {
  const res = await fetch(`http://127.0.0.1:${port}/connz?limit=1024`);
  const { connections } = (await res.json()) as { connections: { name?: string; in_msgs: number; out_msgs: number; in_bytes: number; out_bytes: number }[] };
  const byService = new Map<string, Traffic>();
  for (const c of connections) {
    const service = /^memex-([a-z]+)-/.exec(c.name ?? '')?.[1] ?? 'other';
    const t = byService.get(service) ?? { in: 0, out: 0, inBytes: 0, outBytes: 0 };
    t.in += c.in_msgs;
    t.out += c.out_msgs;
    t.inBytes += c.in_bytes;
    t.outBytes += c.out_bytes;
    byService.set(service, t);
  }
  return byService;
}

/** Per memo, the messages each service sent and got, and the bytes in all, between two readings. */
function perMemo(before: Map<string, Traffic>, after: Map<string, Traffic>, memos: number): string {
  let sent = 0;
  let bytes = 0;
  const parts: string[] = [];
  for (const [service, t] of [...after].sort((a, b) => b[1].in + b[1].out - (a[1].in + a[1].out))) {
    const b = before.get(service) ?? { in: 0, out: 0, inBytes: 0, outBytes: 0 };
    const sentHere = t.in - b.in;
    sent += sentHere;
    bytes += t.inBytes - b.inBytes + (t.outBytes - b.outBytes);
    parts.push(`${service} ${(sentHere / memos).toFixed(1)} sent / ${((t.out - b.out) / memos).toFixed(1)} got`);
  }
  return `${(sent / memos).toFixed(1)} sent, ${(bytes / memos / 1024).toFixed(1)} KiB through the server (${parts.join(', ')})`;
}
