/**
 * Rebuilding the index from the memo event log, as an operator does after losing it: the stack as
 * `pnpm start` runs it, `--memos` memos of ~1,500 characters posted over HTTPS (through the batch
 * route, or one POST per memo on a tree without it) and processed, then
 * `memex reindex --rebuild --wait` timed (the memo service pages its log to the indexer, which
 * brings the catalog up and embeds every memo's current revision again). Printed beside the
 * ingestion of the same memos and the embedder alone on them, in the same run.
 *
 *   tsx bench/reindex.bench.ts [--memos 2000] [--chars 1500] [--batch-size 256] [--concurrency 4]
 *                              [--log FILE] [--log-level warn] [--stall-seconds 600]
 *
 * At `--memos 100000` the ingestion takes a while; it waits on the event feed, not on one GET per memo.
 * Progress goes to stderr every few seconds (posted, processed, replayed); `--log` appends the
 * stack's own output (at `--log-level`) to FILE as it comes. The bench fails, naming memos, when the
 * feed shows none of them processed for `--stall-seconds`, and says so when the rebuild's progress
 * does not move for that long.
 */
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { spawnTs } from '../test/support/processes';
import { startProcessStack } from '../test/support/processStack';
import { httpsJson } from '../test/support/https';
import { embedderAloneMemosPerSecond } from './support/embedderAlone';
import { memoTexts } from './support/memoTexts';
import { NoBatchRoute, chunksOf, postBulk, postSingle, waitFeed, type Call } from './support/ingest';
import { printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '2000' },
    chars: { type: 'string', default: '1500' },
    'batch-size': { type: 'string', default: '256' },
    concurrency: { type: 'string', default: '4' },
    log: { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
    'stall-seconds': { type: 'string', default: '600' },
  },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const STALL_MS = Number(values['stall-seconds']) * 1000;
const began = performance.now();
/** A progress line on stderr, with the seconds since the bench began. */
const progress = (line: string) => console.error(`[${((performance.now() - began) / 1000).toFixed(0).padStart(5)} s] ${line}`);
/** `progress`, at most every 5 s (and always for the last of a count). */
const every = (what: (n: number) => string, of: number) => {
  let last = 0;
  return (n: number) => {
    if (n < of && performance.now() - last < 5000) return;
    last = performance.now();
    progress(what(n));
  };
};

const texts = memoTexts(MEMOS, CHARS);
progress(`${texts.length} memo texts made`);

/** The embedder's rate is per memo: a sample of these memos measures it (all 100k would take minutes). */
const alone = await embedderAloneMemosPerSecond(texts.slice(0, 5000));
progress(`embedder alone: ${alone.toFixed(0)} memos/s`);

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', LOG_LEVEL: values['log-level'] });
if (values.log) {
  const log = values.log;
  const tee = (d: Buffer) => appendFileSync(log, d);
  stack.process.stdout!.on('data', tee);
  stack.process.stderr!.on('data', tee);
}
progress('stack started');

/**
 * Runs the CLI, its lines passed on to stderr as they come (the rebuild's progress, a line each time
 * it moves), with a line of our own each `STALL_MS` it says nothing new.
 */
function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnTs('packages/cli/src/main.ts', args, stack.env);
    let stderr = '';
    let saidAt = performance.now();
    const quiet = setInterval(() => {
      const s = (performance.now() - saidAt) / 1000;
      if (s * 1000 >= STALL_MS) progress(`memex ${args[0]}: nothing new for ${s.toFixed(0)} s (stalled? see --log)`);
    }, STALL_MS);
    child.once('exit', () => clearInterval(quiet));
    const pass = (d: Buffer) => {
      saidAt = performance.now();
      for (const line of d.toString().split('\n').filter(Boolean)) progress(`memex ${args[0]}: ${line}`);
    };
    child.stdout!.on('data', pass);
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      pass(d);
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

try {
  const send = <T,>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  // A kept-alive socket the gateway closed while the rebuild left it idle: reads are sent again once.
  const call: Call = <T,>(method: string, url: string, body?: unknown) =>
    send<T>(method, url, body).catch((error: unknown) => {
      if ((error as { code?: string }).code === 'ECONNRESET' && (method === 'GET' || url === '/api/v1/search')) return send<T>(method, url, body);
      throw new Error(`${method} ${url}: ${(error as Error).message}`, { cause: error });
    });
  const started = performance.now();
  let how = `batches of ${values['batch-size']}`;
  const onPosted = every((n) => `posted ${n}/${MEMOS}`, MEMOS);
  const { ids } = await postBulk(call, texts, Number(values['batch-size']), Number(values.concurrency), onPosted).catch(async (error: unknown) => {
    if (!(error instanceof NoBatchRoute)) throw error;
    console.log(`${error.message}: one POST per memo at concurrency 32`);
    how = 'one POST per memo';
    return postSingle(call, texts, 32);
  });
  await waitFeed(call, ids, undefined, {
    pollMs: 500,
    onSeen: every((n) => `processed ${n}/${MEMOS} (memo.processed or memo.failed on the feed)`, MEMOS),
    stallMs: STALL_MS,
  });
  const ingestSeconds = (performance.now() - started) / 1000;

  const t = performance.now();
  const rebuilt = await cli(['reindex', '--rebuild', '--wait']);
  const rebuildSeconds = (performance.now() - t) / 1000;
  if (rebuilt.code !== 0) throw new Error(`memex reindex --rebuild failed: ${rebuilt.stderr}`);
  progress(`rebuilt in ${rebuildSeconds.toFixed(1)} s; reading every memo back`);
  const chunks = await chunksOf(call, ids, 16, every((n) => `read back ${n}/${MEMOS}`, MEMOS));
  const probe = await call<{ results: unknown[] }>('POST', '/api/v1/search', { query: 'the', search_method: 'chunk_vector_search', limit: 5 });
  if (probe.status !== 200 || probe.body.results.length === 0) throw new Error(`search after the rebuild found nothing: ${probe.text}`);

  printTable(`rebuild of the index from the memo event log: ${MEMOS} memos of ~${CHARS} chars, ${chunks} chunks`, [
    ['memex reindex --rebuild --wait', `${rebuildSeconds.toFixed(1)} s, ${(MEMOS / rebuildSeconds).toFixed(0)} memos/s (the CLI's own start and polling included)`],
    ['ingestion of the same memos', `${ingestSeconds.toFixed(1)} s, ${(MEMOS / ingestSeconds).toFixed(0)} memos/s (${how})`],
    ['embedder alone on them', `${alone.toFixed(0)} memos/s (rebuild / embedder: ${(MEMOS / rebuildSeconds / alone).toFixed(2)})`],
  ]);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
