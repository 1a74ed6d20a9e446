/**
 * Rebuilding the index from the memo event log, as an operator does after losing it: the stack as
 * `pnpm start` runs it, `--memos` memos of ~1,500 characters posted over HTTPS (through the batch
 * route, or one POST per memo on a tree without it) and processed, then
 * `memex reindex --rebuild --wait` timed (the memo service pages its log to the indexer, which
 * brings the catalog up and embeds every memo's current revision again). Printed beside the
 * ingestion of the same memos and the embedder alone on them, in the same run.
 *
 *   tsx bench/reindex.bench.ts [--memos 2000] [--chars 1500] [--batch-size 256] [--concurrency 4]
 *
 * At `--memos 100000` the ingestion takes a while; it waits on the event feed, not on one GET per memo.
 */
import { parseArgs } from 'node:util';
import { runTs } from '../test/support/processes';
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
  },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const texts = memoTexts(MEMOS, CHARS);

/** The embedder's rate is per memo: a sample of these memos measures it (all 100k would take minutes). */
const alone = await embedderAloneMemosPerSecond(texts.slice(0, 5000));

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0' });
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
  const { ids } = await postBulk(call, texts, Number(values['batch-size']), Number(values.concurrency)).catch(async (error: unknown) => {
    if (!(error instanceof NoBatchRoute)) throw error;
    console.log(`${error.message}: one POST per memo at concurrency 32`);
    how = 'one POST per memo';
    return postSingle(call, texts, 32);
  });
  await waitFeed(call, ids, undefined, 500);
  const ingestSeconds = (performance.now() - started) / 1000;

  const t = performance.now();
  const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--rebuild', '--wait'], stack.env);
  const rebuildSeconds = (performance.now() - t) / 1000;
  if (cli.code !== 0) throw new Error(`memex reindex --rebuild failed: ${cli.stderr}`);
  const chunks = await chunksOf(call, ids, 16);
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
