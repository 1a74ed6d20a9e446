/**
 * Ingestion: memos/s and chunks/s from POST to `pending: false` through the whole stack (as
 * `pnpm start` runs it: separate processes, HTTPS), beside the embedder's raw sentences/s measured
 * in the same run.
 *
 *   tsx bench/ingest.bench.ts [--memos 2000] [--chars 1500] [--concurrency 32] [--profile <dir>]
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
import { startProcessStack } from '../test/support/processStack';
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
    profile: { type: 'string' },
  },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const CONCURRENCY = Number(values.concurrency);


const embedder = await measureEmbedder({
  load: { model: DEFAULT_EMBEDDING_MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false },
  sentences: 6400,
});
console.log(`embedder: ${embedder.sentencesPerSecond.toFixed(0)} sentences/s raw (batch ${embedder.batchSize}, ~${embedder.meanWordsPerSentence.toFixed(0)} words each)`);

const profileDir = values.profile ? path.resolve(values.profile) : undefined;
const alone = await embedderAloneMemosPerSecond(memoTexts(MEMOS, CHARS));
console.log(`embedder alone on these memos: ${alone.toFixed(0)} memos/s`);

const stack = await startProcessStack({
  MEMEX_RATE_LIMIT: '0',
  ...(profileDir ? { MEMEX_NODE_FLAGS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
});
try {
  const texts = memoTexts(MEMOS, CHARS);
  const call = <T>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });

  const cpuBefore = stack.process.pid ? cpuSnapshot(stack.process.pid) : new Map();
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
  const seconds = (done - started) / 1000;
  // CPU per memo is steadier than memos/s when other work shares the machine.
  const cpu = stack.process.pid ? cpuBetween(cpuBefore, cpuSnapshot(stack.process.pid)) : [];
  const cpuTotal = cpu.reduce((sum, [, s]) => sum + s, 0);
  printTable(`ingestion of ${MEMOS} memos of ~${CHARS} chars (concurrency ${CONCURRENCY}), whole stack over HTTPS`, [
    ['POST phase', `${((posted - started) / 1000).toFixed(1)} s, ${(MEMOS / ((posted - started) / 1000)).toFixed(0)} memos/s, p50 ${percentile(postLatencies, 50).toFixed(1)} ms, p99 ${percentile(postLatencies, 99).toFixed(1)} ms`],
    ['POST → all pending:false', `${seconds.toFixed(1)} s`],
    ['throughput', `${(MEMOS / seconds).toFixed(1)} memos/s, ${(chunks / seconds).toFixed(1)} chunks/s (${chunks} chunks)`],
    ['embedder raw (same run)', `${embedder.sentencesPerSecond.toFixed(0)} sentences/s; on these memos alone ${alone.toFixed(0)} memos/s (ratio ${(MEMOS / seconds / alone).toFixed(2)})`],
    ['stack CPU per memo', `${((1000 * cpuTotal) / MEMOS).toFixed(2)} ms (${cpu.map(([n, s]) => `${n} ${((1000 * s) / MEMOS).toFixed(2)}`).join(', ')})`],
  ]);
  // A service that died and restarted mid-run spoils the figures (and is a bug): say so.
  const deaths = stack.output().split('\n').filter((l) => /\[memex\] .*exited|nhandled|uncaught/i.test(l));
  if (deaths.length > 0) console.error(`\nservices died during the run:\n${stack.output()}`);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
