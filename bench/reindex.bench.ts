/**
 * Rebuilding the index from the memo event log, as an operator does after losing it: the stack as
 * `pnpm start` runs it, `--memos` memos of ~1,500 characters posted over HTTPS and processed, then
 * `memex reindex --rebuild --wait` timed (the memo service pages its log to the indexer, which
 * brings the catalog up and embeds every memo's current revision again). Printed beside the
 * ingestion of the same memos and the embedder alone on them, in the same run.
 *
 *   tsx bench/reindex.bench.ts [--memos 2000] [--chars 1500]
 */
import { parseArgs } from 'node:util';
import type { Memo } from '@memex/contracts';
import { runTs } from '../test/support/processes';
import { startProcessStack } from '../test/support/processStack';
import { httpsJson } from '../test/support/https';
import { embedderAloneMemosPerSecond } from './support/embedderAlone';
import { memoTexts } from './support/memoTexts';
import { waitProcessed } from './support/processed';
import { pool, printTable } from './support/stats';

const { values } = parseArgs({
  options: { memos: { type: 'string', default: '2000' }, chars: { type: 'string', default: '1500' } },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const texts = memoTexts(MEMOS, CHARS);

const alone = await embedderAloneMemosPerSecond(texts);

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0' });
try {
  const call = <T>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  const started = performance.now();
  const ids = await pool(
    texts.map((content, i) => async () => {
      const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `Memo ${i}`, content });
      if (res.status !== 200) throw new Error(`POST failed: ${res.status} ${res.text}`);
      return res.body.memo_uuid;
    }),
    32,
  );
  const chunks = await waitProcessed(ids, (id) => call<Memo>('GET', `/api/v1/memo/${id}`));
  const ingestSeconds = (performance.now() - started) / 1000;

  const t = performance.now();
  const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--rebuild', '--wait'], stack.env);
  const rebuildSeconds = (performance.now() - t) / 1000;
  if (cli.code !== 0) throw new Error(`memex reindex --rebuild failed: ${cli.stderr}`);
  const probe = await call<{ results: unknown[] }>('POST', '/api/v1/search', { query: 'the', search_method: 'chunk_vector_search', limit: 5 });
  if (probe.status !== 200 || probe.body.results.length === 0) throw new Error(`search after the rebuild found nothing: ${probe.text}`);

  printTable(`rebuild of the index from the memo event log: ${MEMOS} memos of ~${CHARS} chars, ${chunks} chunks`, [
    ['memex reindex --rebuild --wait', `${rebuildSeconds.toFixed(1)} s, ${(MEMOS / rebuildSeconds).toFixed(0)} memos/s (the CLI's own start and polling included)`],
    ['ingestion of the same memos', `${ingestSeconds.toFixed(1)} s, ${(MEMOS / ingestSeconds).toFixed(0)} memos/s`],
    ['embedder alone on them', `${alone.toFixed(0)} memos/s (rebuild / embedder: ${(MEMOS / rebuildSeconds / alone).toFixed(2)})`],
  ]);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
