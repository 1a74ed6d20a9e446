/**
 * Ingestion: memos/s and chunks/s from POST to `pending: false` through the whole stack (as
 * `pnpm start` runs it: separate processes, HTTPS), beside the embedder's raw sentences/s measured
 * in the same run.
 *
 *   tsx bench/ingest.bench.ts [--memos 2000] [--chars 1500] [--concurrency 32]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Memo } from '@memex/contracts';
import { DEFAULT_EMBEDDING_MODEL } from '../services/indexer/src/embedding/embedder';
import { measureEmbedder } from '../services/indexer/src/embedding/measure';
import { REPO_ROOT } from '../test/support/paths';
import { startProcessStack } from '../test/support/processStack';
import { httpsJson } from '../test/support/https';
import { percentile, pool, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '2000' },
    chars: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '32' },
  },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const CONCURRENCY = Number(values.concurrency);

/** Real technical prose: consecutive Vaswani abstracts, cut at a sentence near the target length. */
function memoTexts(count: number, chars: number): string[] {
  const lines = readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', 'vaswani', 'corpus.jsonl'), 'utf8').trim().split('\n');
  const docs = lines.map((l) => (JSON.parse(l) as { text: string }).text);
  const out: string[] = [];
  let i = 0;
  while (out.length < count) {
    let text = '';
    while (text.length < chars) text += `${docs[i++ % docs.length]!.trim()}.\n\n`;
    const cut = text.lastIndexOf('.', chars + 100);
    out.push(text.slice(0, cut > chars / 2 ? cut + 1 : chars));
  }
  return out;
}

const embedder = await measureEmbedder({
  load: { model: DEFAULT_EMBEDDING_MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false },
  sentences: 6400,
});
console.log(`embedder: ${embedder.sentencesPerSecond.toFixed(0)} sentences/s raw (batch ${embedder.batchSize}, ~${embedder.meanWordsPerSentence.toFixed(0)} words each)`);

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0' });
try {
  const texts = memoTexts(MEMOS, CHARS);
  const call = <T>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });

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

  // Processing is roughly first-in first-out: wait on the oldest memo not yet done.
  let chunks = 0;
  for (const id of ids) {
    for (;;) {
      const res = await call<Memo>('GET', `/api/v1/memo/${id}`);
      if (res.status === 200 && !res.body.pending) {
        chunks += res.body.chunks.length;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const done = Date.now();
  const seconds = (done - started) / 1000;
  printTable(`ingestion of ${MEMOS} memos of ~${CHARS} chars (concurrency ${CONCURRENCY}), whole stack over HTTPS`, [
    ['POST phase', `${((posted - started) / 1000).toFixed(1)} s, ${(MEMOS / ((posted - started) / 1000)).toFixed(0)} memos/s, p50 ${percentile(postLatencies, 50).toFixed(1)} ms, p99 ${percentile(postLatencies, 99).toFixed(1)} ms`],
    ['POST → all pending:false', `${seconds.toFixed(1)} s`],
    ['throughput', `${(MEMOS / seconds).toFixed(1)} memos/s, ${(chunks / seconds).toFixed(1)} chunks/s (${chunks} chunks)`],
    ['embedder raw (same run)', `${embedder.sentencesPerSecond.toFixed(0)} sentences/s`],
  ]);
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
