/**
 * chunk_vector_search at 100k chunks on the embedded index: p50/p99 latency and QPS of the whole
 * search (query embedding, BM25 and dense rankings within the project and filters, fusion), with
 * and without a selective filter (2% of the memos), beside an exact brute-force dense scan over the
 * same vectors in the same run.
 *
 *   node --expose-gc --import tsx bench/search.bench.ts [--chunks 100000] [--queries 300]
 * (--expose-gc adds the index's memory to the figures)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Filter } from '@memex/contracts';
import { chunkId, silentLogger } from '@memex/runtime';
import { seededRandom, tempDir } from '@memex/testing';
import { termFrequencies } from '@memex/text';
import { loadEmbedder } from '../services/indexer/src/embedding/embedder';
import { hybridSearch } from '../services/indexer/src/search/hybrid';
import { EmbeddedSearchIndex } from '../services/indexer/src/searchIndex/embedded';
import { ModelSet } from '../services/indexer/src/state/models';
import { TopK } from '../services/indexer/src/searchIndex/topK';
import { REPO_ROOT } from '../test/support/paths';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({ options: { chunks: { type: 'string', default: '100000' }, queries: { type: 'string', default: '300' } } });
const CHUNKS = Number(values.chunks);
const QUERIES = Number(values.queries);
const CHUNKS_PER_MEMO = 10;
const TEAMS = 50;
const MODEL = 'memex-glove-100d';

const sentences = readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', 'vaswani', 'corpus.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .flatMap((l) => (JSON.parse(l) as { text: string }).text.split(/(?<=\.)\s+/))
  .filter((s) => s.length > 30);
const queries = [
  ...readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', 'cranfield', 'queries.jsonl'), 'utf8').trim().split('\n'),
  ...readFileSync(path.join(REPO_ROOT, '..', 'shared', 'eval', 'vaswani', 'queries.jsonl'), 'utf8').trim().split('\n'),
].map((l) => (JSON.parse(l) as { text: string }).text);

const dir = tempDir('memex-search-bench-');
const index = new EmbeddedSearchIndex(path.join(dir.path, 'index.db'));
const embedder = await loadEmbedder({ model: MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false });
await index.openModel(MODEL, embedder.dimension);
const models = new ModelSet(async () => embedder, index, silentLogger());
await models.apply({ activeModel: MODEL });

const random = seededRandom(7);
const projectId = randomUUID();
const allVectors = new Float32Array(CHUNKS * embedder.dimension);
let built = 0;
const buildStarted = Date.now();
for (let m = 0; built < CHUNKS; m++) {
  const memoId = randomUUID();
  const team = `team-${m % TEAMS}`;
  await index.applyCatalog({
    memoId,
    projectId,
    version: 1,
    memo: {
      projectId,
      memoId,
      revision: 1,
      title: `Memo ${m}`,
      summary: '',
      source: null,
      clientReferenceId: null,
      memoType: 'text',
      tags: [],
      metadata: { team },
      archived: false,
      expirationDate: null,
    },
  });
  const texts = Array.from({ length: Math.min(CHUNKS_PER_MEMO, CHUNKS - built) }, () =>
    Array.from({ length: 3 }, () => sentences[Math.floor(random() * sentences.length)]!).join(' '),
  );
  const dense = await embedder.embed(texts, 'document');
  await index.putChunks(
    MODEL,
    { memoId, projectId, revision: 1 },
    texts.map((content, i) => {
      allVectors.set(dense[i]!, (built + i) * embedder.dimension);
      return { chunkId: chunkId(memoId, 1, i), index: i, content, dense: dense[i]!, terms: termFrequencies(content) };
    }),
  );
  built += texts.length;
}
const buildSeconds = (Date.now() - buildStarted) / 1000;
console.log(`indexed ${built} chunks (${built / CHUNKS_PER_MEMO} memos, ${embedder.dimension}-d) in ${buildSeconds.toFixed(1)} s`);

/** The plain exact dense scan over every vector, top 10: the baseline. */
function bruteForce(query: Float32Array): number[] {
  const dim = embedder.dimension;
  const top = new TopK<number>(10);
  for (let i = 0; i < built; i++) {
    let dot = 0;
    const base = i * dim;
    for (let d = 0; d < dim; d++) dot += allVectors[base + d]! * query[d]!;
    top.offer(dot, i);
  }
  return top.sorted().map((t) => t.item);
}

async function measure(label: string, run: (q: string) => Promise<unknown>): Promise<[string, string]> {
  for (const q of queries.slice(0, 20)) await run(q); // warm-up
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < QUERIES; i++) {
    const t = performance.now();
    await run(queries[i % queries.length]!);
    latencies.push(performance.now() - t);
  }
  const qps = QUERIES / ((performance.now() - started) / 1000);
  return [label, `p50 ${percentile(latencies, 50).toFixed(2)} ms   p99 ${percentile(latencies, 99).toFixed(2)} ms   ${qps.toFixed(0)} QPS`];
}

const selective: Filter[] = [{ field: 'team', operator: 'eq', value: 'team-7', filter_type: 'custom_metadata' }];
const options = { lexicalWeight: 0.85, candidates: 100 };
const rows = [
  await measure('hybrid search, no filter', (q) => hybridSearch(index, models, { projectId, query: q, filters: [], limit: 10 }, options)),
  await measure(`hybrid search, filter selecting 1/${TEAMS} of memos`, (q) =>
    hybridSearch(index, models, { projectId, query: q, filters: selective, limit: 10 }, options),
  ),
  await measure('dense ranking only, no filter', (q) => hybridSearch(index, models, { projectId, query: q, filters: [], limit: 10, ranking: 'dense' }, options)),
  await measure('exact brute-force dense scan (plain loop)', async (q) => bruteForce((await embedder.embed([q], 'query'))[0]!)),
  await measure('query embedding alone', (q) => embedder.embed([q], 'query')),
];
await index.close();
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
// A restart: how long until the embedded index serves again (it loads the catalog and vectors).
const reopenStarted = performance.now();
const reopened = new EmbeddedSearchIndex(path.join(dir.path, 'index.db'));
await reopened.openModel(MODEL, embedder.dimension);
const reopenMs = performance.now() - reopenStarted;
const found = await reopened.countChunks(MODEL, projectId);
gc?.();
const heapAfter = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
rows.push(['restart: reopen and load the index', `${(reopenMs / 1000).toFixed(2)} s for ${found} chunks`]);
if (gc) rows.push(['memory of the loaded index (heap + buffers)', `${((heapAfter - heapBefore) / 2 ** 20).toFixed(0)} MiB, ${((heapAfter - heapBefore) / found).toFixed(0)} bytes per chunk`]);
printTable(`search over ${built} chunks, embedded index, top 10, sequential queries on one core`, rows);
await embedder.dispose();
await reopened.close();
dir.remove();
