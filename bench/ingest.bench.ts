/**
 * Ingestion through the whole stack (as `pnpm start` runs it: separate processes, HTTPS), bulk and
 * single POST side by side in one run on the same memos: memos/s POSTed and processed (from the
 * first POST to every memo `pending: false`, learnt from the event feed, then read back), CPU per
 * memo per process, NATS messages per memo (nats-server's monitoring, which the stack under test
 * turns on with MEMEX_NATS_MONITOR_PORT; the bench's own feed reads are among them), and the ratio
 * to the embedder alone on the same chunks. Bulk is `POST /api/v1/memo/batch` in batches of
 * `--batch-size`, `--bulk-concurrency` batches at once; single is one POST per memo at
 * `--concurrency`. A tree without the batch route (404) gets its single rows and a line saying so.
 *
 * Then searches at `--search-concurrency` clients without pause, for 3 s alone and during a bulk
 * import of `--search-memos` memos (0 skips it): p50/p99 of each.
 *
 * Then one large memo (`--large-chars`, 2,000,000: ~2,000 chunks; 0 skips it) is POSTed while two
 * clients search without pause: how long it takes to `pending: false`, the searches' latency before
 * and during, and the indexer's and the gateway's event loops during (issue 13's item 4).
 *
 *   tsx bench/ingest.bench.ts [--mode both|bulk|single] [--memos 2000] [--chars 1500] [--concurrency 32]
 *     [--batch-size 256] [--bulk-concurrency 4] [--search-memos 2000] [--search-concurrency 8]
 *     [--large-chars 2000000] [--profile <dir>] [--pause-processing] [--scale search=1]
 *
 * `--pause-processing` stops the indexer, agent and extractor (SIGSTOP) during each POST phase and
 * lets them go (SIGCONT) when it ends: the POST phase is then the write path alone.
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
import { NoBatchRoute, chunksOf, natsTraffic, perMemo, postBulk, postSingle, waitFeed, type Call, type Posted } from './support/ingest';
import { memoTexts } from './support/memoTexts';
import { waitProcessed } from './support/processed';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    memos: { type: 'string', default: '2000' },
    chars: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '32' },
    'batch-size': { type: 'string', default: '256' },
    'bulk-concurrency': { type: 'string', default: '4' },
    'search-memos': { type: 'string' },
    'search-concurrency': { type: 'string', default: '8' },
    'large-chars': { type: 'string', default: '2000000' },
    profile: { type: 'string' },
    /** Stops the indexer, agent and extractor (SIGSTOP) while memos are POSTed: the POST path alone. */
    'pause-processing': { type: 'boolean', default: false },
    /** Passed to `pnpm start --scale` (e.g. `search=1`: searches go to an indexer that does not index). */
    scale: { type: 'string', default: '' },
  },
});
if (!['both', 'bulk', 'single'].includes(values.mode)) throw new Error('--mode is both, bulk or single');
const MODES = (values.mode === 'both' ? ['single', 'bulk'] : [values.mode]) as ('single' | 'bulk')[];
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const CONCURRENCY = Number(values.concurrency);
const BATCH_SIZE = Number(values['batch-size']);
const BULK_CONCURRENCY = Number(values['bulk-concurrency']);
const SEARCH_MEMOS = Number(values['search-memos'] ?? values.memos);
const SEARCH_CONCURRENCY = Number(values['search-concurrency']);
const LARGE_CHARS = Number(values['large-chars']);
/** The services a search passes through, whose event loops the large memo's row shows. */
const WATCHED = ['indexer', 'gateway'] as const;
/** Clients searching without pause around the large memo. */
const SEARCHERS = 2;
/** What the searchers ask: the openings of real abstracts. */
const searchQueries = memoTexts(64, 60).map((t) => t.slice(0, 60));

const embedder = await measureEmbedder({
  load: { model: DEFAULT_EMBEDDING_MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false },
  sentences: 6400,
});
console.log(`embedder: ${embedder.sentencesPerSecond.toFixed(0)} sentences/s raw (batch ${embedder.batchSize}, ~${embedder.meanWordsPerSentence.toFixed(0)} words each)`);

const profileDir = values.profile ? path.resolve(values.profile) : undefined;
const texts = memoTexts(MEMOS, CHARS);
const alone = await embedderAloneMemosPerSecond(texts);
console.log(`embedder alone on these memos: ${alone.toFixed(0)} memos/s`);

const monitorPort = await freePort();
const stack = await startProcessStack({
  MEMEX_RATE_LIMIT: '0',
  MEMEX_NATS_MONITOR_PORT: String(monitorPort),
  ...(profileDir ? { MEMEX_NODE_FLAGS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
}, values.scale ? ['--scale', values.scale] : []);
/** The event feed's cursor: each phase reads only what came after the one before. */
let feedCursor: string | undefined;
try {
  const call: Call = <T,>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) }).catch((error: unknown) => {
      throw new Error(`${method} ${url}: ${(error as Error).message}`, { cause: error });
    });

  const measured = new Map<'single' | 'bulk', number>();
  let bulkRoute = true;
  for (const mode of MODES) {
    const rows = await phase(stack, call, mode === 'bulk'
      ? () => postBulk(call, texts, BATCH_SIZE, BULK_CONCURRENCY)
      : () => postSingle(call, texts, CONCURRENCY)).catch((error: unknown) => {
      if (!(error instanceof NoBatchRoute)) throw error;
      bulkRoute = false;
      return undefined;
    });
    if (!rows) {
      console.log(`\nbulk: skipped: ${new NoBatchRoute().message}`);
      continue;
    }
    measured.set(mode, rows.processedPerSecond);
    printTable(
      mode === 'bulk'
        ? `bulk: ${MEMOS} memos of ~${CHARS} chars, POST /api/v1/memo/batch of ${BATCH_SIZE}, ${BULK_CONCURRENCY} at once, whole stack over HTTPS`
        : `single POST: ${MEMOS} memos of ~${CHARS} chars, concurrency ${CONCURRENCY}, whole stack over HTTPS`,
      rows.table,
    );
  }
  if (measured.has('single') && measured.has('bulk')) {
    console.log(`\nbulk / single processed: ${(measured.get('bulk')! / measured.get('single')!).toFixed(2)}x`);
  }
  // A service that died and restarted mid-run spoils the figures (and is a bug): say so.
  const deaths = stack.output().split('\n').filter((l) => /\[memex\] .*exited|nhandled|uncaught/i.test(l));
  if (deaths.length > 0) console.error(`\nservices died during the run:\n${stack.output()}`);

  if (SEARCH_MEMOS > 0) {
    if (bulkRoute) await searchWhileImporting(call);
    else console.log(`\nsearch while importing: skipped: ${new NoBatchRoute().message}`);
  }
  if (LARGE_CHARS > 0) await largeMemo(stack, call);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}

/** One way of posting the memos, timed from the first POST to the last memo processed. */
async function phase(stack: ProcessStack, call: Call, post: () => Promise<Posted>): Promise<{ processedPerSecond: number; table: [string, string][] }> {
  const cpuBefore = stack.process.pid ? cpuSnapshot(stack.process.pid) : new Map();
  const natsBefore = await natsTraffic(monitorPort);
  // With --pause-processing the consumers hold still while the POSTs run, so the POST phase is the
  // write path alone, not the write path competing with processing for the same cores.
  const paused = values['pause-processing'] && stack.process.pid
    ? [...cpuSnapshot(stack.process.pid)].filter(([, p]) => ['indexer', 'agent', 'extractor'].includes(p.name)).map(([pid]) => pid)
    : [];
  for (const pid of paused) process.kill(pid, 'SIGSTOP');
  const started = Date.now();
  const { ids, latencies } = await post().finally(() => {
    for (const pid of paused) process.kill(pid, 'SIGCONT');
  });
  const posted = Date.now();
  const feed = await waitFeed(call, ids, feedCursor);
  feedCursor = feed.next;
  const natsAfter = await natsTraffic(monitorPort);
  // CPU per memo is steadier than memos/s when other work shares the machine.
  const cpu = stack.process.pid ? cpuBetween(cpuBefore, cpuSnapshot(stack.process.pid)) : [];
  const chunks = await chunksOf(call, ids);
  const seconds = (feed.at - started) / 1000;
  const postSeconds = (posted - started) / 1000;
  const cpuTotal = cpu.reduce((sum, [, s]) => sum + s, 0);
  return {
    processedPerSecond: ids.length / seconds,
    table: [
      [paused.length > 0 ? 'POST phase, processing paused' : 'POST phase', `${postSeconds.toFixed(1)} s, ${(ids.length / postSeconds).toFixed(0)} memos/s POSTed, ${latencies.length} requests: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`],
      ['first POST → all pending:false', `${seconds.toFixed(1)} s${feed.failed ? ` (${feed.failed} failed)` : ''}`],
      ['processed', `${(ids.length / seconds).toFixed(1)} memos/s, ${(chunks / seconds).toFixed(1)} chunks/s (${chunks} chunks)`],
      ['embedder alone (same chunks)', `${alone.toFixed(0)} memos/s; stack / embedder ${((ids.length / seconds) / alone).toFixed(2)}`],
      ['NATS messages per memo', perMemo(natsBefore, natsAfter, ids.length)],
      ['stack CPU per memo', `${((1000 * cpuTotal) / ids.length).toFixed(2)} ms (${cpu.map(([n, s]) => `${n} ${((1000 * s) / ids.length).toFixed(2)}`).join(', ')})`],
    ],
  };
}

/** Searches at SEARCH_CONCURRENCY for 3 s alone, then during a bulk import of SEARCH_MEMOS memos. */
async function searchWhileImporting(call: Call): Promise<void> {
  const before = await searchUntil(call, new Promise((r) => setTimeout(r, 3000)), SEARCH_CONCURRENCY);
  const started = performance.now();
  const imported = (async () => {
    const { ids } = await postBulk(call, memoTexts(SEARCH_MEMOS, CHARS), BATCH_SIZE, BULK_CONCURRENCY);
    const feed = await waitFeed(call, ids, feedCursor);
    feedCursor = feed.next;
  })();
  const during = await searchUntil(call, imported, SEARCH_CONCURRENCY);
  await imported;
  const seconds = (performance.now() - started) / 1000;
  printTable(`search at c=${SEARCH_CONCURRENCY} while ${SEARCH_MEMOS} memos are imported in bulk (goal: p99 ≤ 100 ms)`, [
    ['searches for 3 s before', describeLatencies(before, 3)],
    ['searches meanwhile', describeLatencies(during, seconds)],
    ['import meanwhile', `${seconds.toFixed(1)} s to all pending:false, ${(SEARCH_MEMOS / seconds).toFixed(0)} memos/s`],
  ]);
}

/** Searches at `clients` without pause until `until` resolves: each one's latency, in ms. */
async function searchUntil(call: Call, until: Promise<unknown>, clients = SEARCHERS): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = c; !done; i += clients) {
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
