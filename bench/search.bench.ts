/**
 * chunk_vector_search on the embedded index, two parts in one run:
 *
 * 1. Real text, `--chunks` (100k) chunks of Vaswani sentences, the offline 100-d model, through
 *    EmbeddedSearchIndex (SQLite + memory): p50/p99 latency and QPS of the whole search (query
 *    embedding, BM25 and dense rankings within the project and filters, fusion), with and without a
 *    selective filter (2% of the memos), with the dense scan on the scan thread (INDEXER_SCAN_THREAD,
 *    the default) and in the indexer's thread, one search at a time and four at once, each ranking alone, BM25 exhaustive vs MaxScore, dense
 *    recall@10 against an exact float scan, memory per chunk after a restart, and the anchors of
 *    ../shared/MEASURED.md measured beside them: a plain JS exact scan and usearch's exactSearch.
 * 2. Synthetic clustered vectors, `--synthetic` (1M) chunks of `--dim` (384) dimensions, one
 *    project, the index's in-memory side (ModelMemory; the full-precision vectors for the final
 *    rescoring held outside it in one array, where the real index reads them from SQLite): build
 *    time, memory per chunk, dense p50/p99/QPS, recall@10 against exact, beside usearch exactSearch over the same float vectors. `--synthetic 0` skips it.
 *
 *   node --expose-gc --import tsx bench/search.bench.ts [--chunks 100000] [--queries 300] [--synthetic 1000000] [--dim 384]
 *     [--expansion-add 200] [--expansion-search 400] [--connectivity 16] [--graph-candidates 256] [--rescore-margin 16]
 *     (HNSW build/search breadth, graph neighbours taken, int8 candidates rescored: the recall/latency trade)
 *     [--graph-build background|inline]   (inline: a project's graph built at once when it passes ann-min, as before)
 *     [--vector-cache-mb 16]   (full-precision vectors kept for rescoring, as INDEXER_VECTOR_CACHE_MB; 0: each read from disk)
 * (--expose-gc makes the memory figures meaningful)
 */
import { randomUUID } from 'node:crypto';
import usearch from 'usearch';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Filter } from '@memex/contracts';
import { scanTopK, vectorScanKernel } from '@memex/vector-scan';
import { chunkId, silentLogger } from '@memex/runtime';
import { seededRandom, tempDir } from '@memex/testing';
import { encodeQuery, termFrequencies } from '@memex/text';
import { loadEmbedder } from '../services/indexer/src/embedding/embedder';
import { hybridSearch } from '../services/indexer/src/search/hybrid';
import { EmbeddedSearchIndex } from '../services/indexer/src/searchIndex/embedded/sqliteIndex';
import { ModelSet } from '../services/indexer/src/state/models';
import { TopK } from '../services/indexer/src/searchIndex/topK';
import { CatalogMemory } from '../services/indexer/src/searchIndex/embedded/catalog';
import { DEFAULT_DENSE_OPTIONS } from '../services/indexer/src/searchIndex/embedded/denseOptions';
import { ModelMemory } from '../services/indexer/src/searchIndex/embedded/model';
import { quantize, quantizeStored } from '../services/indexer/src/searchIndex/embedded/quantize';
import { IndexerEnv } from '../services/indexer/src/config';
import { REPO_ROOT } from '../test/support/paths';
import { evalQueryTexts, SENTENCE_TEAMS, sentenceMemo, vaswaniSentences, writeSentenceMemo } from './support/sentenceCorpus';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '300' },
    synthetic: { type: 'string', default: '1000000' },
    dim: { type: 'string', default: '384' },
    'ann-min': { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.annMinChunks) },
    'expansion-add': { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.expansionAdd) },
    'expansion-search': { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.expansionSearch) },
    connectivity: { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.connectivity) },
    'graph-candidates': { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.graphCandidates) },
    'rescore-margin': { type: 'string', default: String(DEFAULT_DENSE_OPTIONS.rescoreMargin) },
    'graph-build': { type: 'string', default: 'background' },
    'vector-cache-mb': { type: 'string', default: String(IndexerEnv.properties.INDEXER_VECTOR_CACHE_MB.default) },
  },
});
const CHUNKS = Number(values.chunks);
const QUERIES = Number(values.queries);
const SYNTHETIC = Number(values.synthetic);
const SYNTHETIC_DIM = Number(values.dim);
const gc = (globalThis as { gc?: () => void }).gc;
/** Resident memory (JS heap, buffers and native allocations such as usearch's graph). */
function rss(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().rss;
}
const { exactSearch, MetricKind } = usearch;
const CHUNKS_PER_MEMO = 10;
const MODEL = 'memex-glove-100d';

const sentences = vaswaniSentences();
const queries = evalQueryTexts();

const dir = tempDir('memex-search-bench-');
const dense = {
  annMinChunks: Number(values['ann-min']),
  expansionAdd: Number(values['expansion-add']),
  expansionSearch: Number(values['expansion-search']),
  connectivity: Number(values.connectivity),
  graphCandidates: Number(values['graph-candidates']),
  rescoreMargin: Number(values['rescore-margin']),
};
const graphBuild = values['graph-build'] === 'inline' ? 'inline' : 'background';
// As the indexer runs it (INDEXER_VECTOR_CACHE_MB): rescoring vectors read once are kept up to this budget.
const vectorCacheBytes = Number(values['vector-cache-mb']) * 1024 * 1024;
const index = new EmbeddedSearchIndex(path.join(dir.path, 'index.db'), { dense, graphBuild, vectorCacheBytes });
const embedder = await loadEmbedder({ model: MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false });
await index.openModel(MODEL, embedder.dimension);
const models = new ModelSet(async () => embedder, index, silentLogger());
await models.apply({ activeModel: MODEL });

const random = seededRandom(7);
const projectId = randomUUID();
const allVectors = new Float32Array(CHUNKS * embedder.dimension);
const chunkIds: string[] = [];
let built = 0;
const buildStarted = Date.now();
// What a search arriving during indexing waits for at worst: the longest the event loop was held.
const stalls = monitorEventLoopDelay({ resolution: 5 });
stalls.enable();
for (let m = 0; built < CHUNKS; m++) {
  const memoId = randomUUID();
  const { dense } = await writeSentenceMemo(index, embedder, MODEL, { projectId, memoId, ordinal: m, chunks: Math.min(CHUNKS_PER_MEMO, CHUNKS - built), sentences, random });
  dense.forEach((vector, i) => {
    allVectors.set(vector, (built + i) * embedder.dimension);
    chunkIds.push(chunkId(memoId, 1, i));
  });
  built += dense.length;
  // As the indexer takes each batch of events in its own turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
}
await index.graphsBuilt(); // (the graph is built in the background once the project passes ann-min chunks)
stalls.disable();
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

async function measureOver<Q>(label: string, inputs: readonly Q[], count: number, run: (q: Q) => unknown): Promise<[string, string]> {
  for (const q of inputs.slice(0, 20)) await run(q); // warm-up
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await run(inputs[i % inputs.length]!);
    latencies.push(performance.now() - t);
  }
  const qps = count / ((performance.now() - started) / 1000);
  return [label, `p50 ${percentile(latencies, 50).toFixed(2)} ms   p99 ${percentile(latencies, 99).toFixed(2)} ms   ${qps.toFixed(0)} QPS`];
}
const measure = (label: string, run: (q: string) => unknown) => measureOver(label, queries, QUERIES, run);
/** Writes one memo of 10 chunks to `on`, as the indexer takes one. */
async function writeMemo(on: EmbeddedSearchIndex): Promise<void> {
  const memoId = randomUUID();
  await on.applyCatalog({ memoId, projectId, version: 1, memo: sentenceMemo(projectId, memoId, 'Written during searches') });
  const texts = Array.from({ length: CHUNKS_PER_MEMO }, () => sentences[Math.floor(random() * sentences.length)]!);
  const vectors = await embedder.embed(texts, 'document');
  await on.putChunks(MODEL, { memoId, projectId, revision: 1 }, texts.map((content, i) => ({ chunkId: chunkId(memoId, 1, i), index: i, content, dense: vectors[i]!, terms: termFrequencies(content) })));
}
/** Runs `measure` while memos of 10 chunks are written to `on` every 20 ms (as the indexer takes them), and says how many. */
async function whileWriting(on: EmbeddedSearchIndex, measure: () => Promise<[string, string]>): Promise<[string, string]> {
  let writing = true;
  let written = 0;
  const writer = (async () => {
    while (writing) {
      await writeMemo(on);
      written += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const [label, figures] = await measure();
  writing = false;
  await writer;
  return [label, `${figures}   (${written} memos written meanwhile)`];
}

/** Each search the first after a memo of 10 chunks is written (the write not timed): what a search pays for the change. */
async function afterEachWrite(label: string, on: EmbeddedSearchIndex, run: (q: string) => Promise<unknown>): Promise<[string, string]> {
  const latencies: number[] = [];
  const count = Math.min(QUERIES, 100);
  for (let i = 0; i < count; i++) {
    await writeMemo(on);
    const t = performance.now();
    await run(queries[i % queries.length]!);
    latencies.push(performance.now() - t);
  }
  return [label, `p50 ${percentile(latencies, 50).toFixed(2)} ms   p99 ${percentile(latencies, 99).toFixed(2)} ms`];
}

/** Queries `inFlight` at a time (as an indexer answers concurrent requests): QPS and per-query latency. */
async function measureConcurrent(label: string, inFlight: number, run: (q: string) => Promise<unknown>): Promise<[string, string]> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < QUERIES) {
        const q = queries[next++ % queries.length]!;
        const t = performance.now();
        await run(q);
        latencies.push(performance.now() - t);
        // (the next request arrives by I/O, as the indexer's do: other work gets its turn between)
        await new Promise((resolve) => setImmediate(resolve));
      }
    }),
  );
  const qps = QUERIES / ((performance.now() - started) / 1000);
  return [label, `p50 ${percentile(latencies, 50).toFixed(2)} ms   p99 ${percentile(latencies, 99).toFixed(2)} ms   ${qps.toFixed(0)} QPS`];
}
const queryVectors = await embedder.embed(queries, 'query');
// Every chunk's vector and each query as int8 codes, quantized as the index quantizes them, for the scan rows.
const allCodes = new Int8Array(allVectors.length);
for (let i = 0; i < CHUNKS; i++) quantizeStored(allVectors.subarray(i * embedder.dimension, (i + 1) * embedder.dimension), allCodes, i * embedder.dimension);
const queryCodes = queryVectors.map((v) => {
  const codes = new Int8Array(v.length);
  quantize(v, codes, 0);
  return codes;
});
const queryTerms = queries.map((q) => encodeQuery(q));
const inside = index.modelMemory(MODEL)!;
const eligibleAll = () => inside.catalog.eligible(projectId, []);

/** Dense recall@10 of the index against the exact float scan, over every query. */
function denseRecall(): number {
  let hit = 0;
  let total = 0;
  for (const v of queryVectors) {
    if (!v.some((x) => x !== 0)) continue;
    const truth = new Set(bruteForce(v).map((i) => chunkIds[i]!));
    const found = inside.memory.searchDense(v, eligibleAll(), 10, inside.catalog, projectId);
    hit += found.filter((h) => truth.has(h.chunkId)).length;
    total += truth.size;
  }
  return hit / total;
}

const selective: Filter[] = [{ field: 'team', operator: 'eq', value: 'team-7', filter_type: 'custom_metadata' }];
const options = { lexicalWeight: 0.85, candidates: 100 };
// What the dense half's scan asks for: twice the depth of its candidates (see ModelMemory scanPlan).
const scanDepth = 2 * (options.candidates + dense.rescoreMargin);
// The same file opened again with every dense scan in the searching thread (INDEXER_SCAN_THREAD=false).
const inline = new EmbeddedSearchIndex(path.join(dir.path, 'index.db'), { dense, vectorCacheBytes, scanThread: false });
await inline.openModel(MODEL, embedder.dimension);
const hybrid = (on: EmbeddedSearchIndex) => (q: string) => hybridSearch(on, models, { projectId, query: q, filters: [], limit: 10 }, options);
// Both forms must find the same hits (the scan thread only moves where the scan runs).
let sameHits = 0;
for (const q of queries.slice(0, 50)) {
  const [a, b] = [await hybrid(index)(q), await hybrid(inline)(q)];
  if (JSON.stringify(a.hits.map((h) => [h.chunkId, h.distance])) === JSON.stringify(b.hits.map((h) => [h.chunkId, h.distance]))) sameHits += 1;
}
if (sameHits !== 50) throw new Error(`the scan thread changed the hits of ${50 - sameHits} of 50 queries`);
const readBefore = inside.memory.vectorsRead;
const rows: [string, string][] = [
  await measure('hybrid search, no filter', hybrid(index)),
  [
    `  rescoring vectors read from SQLite per search (the others kept in memory: ${values['vector-cache-mb']} MiB)`,
    ((inside.memory.vectorsRead - readBefore) / (QUERIES + 20)).toFixed(1),
  ],
  ['  same hits with the dense scan on the scan thread and in the searching thread', `${sameHits} of 50 queries`],
  await measure('hybrid search, no filter, dense scan in the searching thread', hybrid(inline)),
  await measureConcurrent('hybrid search, no filter, 4 at once', 4, hybrid(index)),
  await measureConcurrent('hybrid search, no filter, 4 at once, dense scan in the searching thread', 4, hybrid(inline)),
  // Before the rows that index memos during searches (their chunks are not in the exact scan's
  // truth), after the first rows (it searches every query, which fills the rescoring cache).
  ['dense recall@10 vs exact float scan', denseRecall().toFixed(4)],
  await whileWriting(index, () => measureConcurrent('hybrid search, 4 at once while a memo of 10 chunks is indexed every 20 ms', 4, hybrid(index))),
  await whileWriting(inline, () => measureConcurrent('  the same, dense scan in the searching thread', 4, hybrid(inline))),
  await afterEachWrite('hybrid search, each the first after a memo of 10 chunks is written (dense scan in the searching thread)', inline, hybrid(inline)),
  await measure(`hybrid search, filter selecting 1/${SENTENCE_TEAMS} of memos`, (q) =>
    hybridSearch(index, models, { projectId, query: q, filters: selective, limit: 10 }, options),
  ),
  await measure('dense ranking only, no filter', (q) => hybridSearch(index, models, { projectId, query: q, filters: [], limit: 10, ranking: 'dense' }, options)),
  await measureOver(`dense candidates alone (top ${options.candidates}, ${inside.memory.hasGraph(projectId) ? 'HNSW' : 'exact scan'} + rescoring)`, queryVectors, QUERIES, (v) =>
    inside.memory.searchDense(v, eligibleAll(), options.candidates, inside.catalog, projectId),
  ),
  await measureOver(`BM25 candidates alone (top ${options.candidates}, MaxScore)`, queryTerms, QUERIES, (t) =>
    inside.memory.searchSparse(t, projectId, eligibleAll(), options.candidates, inside.catalog),
  ),
  await measureOver(`BM25 candidates, every posting scored (the reference)`, queryTerms, QUERIES, (t) =>
    inside.memory.searchSparseExhaustive(t, projectId, eligibleAll(), options.candidates, inside.catalog),
  ),
  [`longest event-loop stall while indexing (graph built ${graphBuild === 'inline' ? 'at once' : 'in slices'})`, `${(stalls.max / 1e6).toFixed(0)} ms (p99 ${(stalls.percentile(99) / 1e6).toFixed(1)} ms)`],
  await measure('anchor: exact dense scan, plain JS loop', async (q) => bruteForce((await embedder.embed([q], 'query'))[0]!)),
  await measureOver('anchor: usearch exactSearch (SIMD), top 10', queryVectors, Math.min(QUERIES, 100), (v) =>
    exactSearch(allVectors, v.slice(), embedder.dimension, 10, MetricKind.IP),
  ),
  // The exact int8 scan the dense half makes (every code, the top twice the depth), by the index's
  // addon and by usearch's exactSearch, which it replaced, on the same codes.
  await measureOver(`int8 scan of ${CHUNKS} codes, top ${scanDepth}: usearch exactSearch (before)`, queryCodes, Math.min(QUERIES, 100), (c) =>
    exactSearch(allCodes, c, embedder.dimension, scanDepth, MetricKind.IP, 1),
  ),
  await measureOver(`int8 scan of ${CHUNKS} codes, top ${scanDepth}: @memex/vector-scan (${vectorScanKernel()})`, queryCodes, Math.min(QUERIES, 100), (c) =>
    scanTopK({ codes: allCodes, total: CHUNKS, dimension: embedder.dimension, query: c, k: scanDepth }),
  ),
  await measure('query embedding alone', (q) => embedder.embed([q], 'query')),
];
await inline.close();
await index.close();
const heapBefore = rss();
// A restart: how long until the embedded index serves again (it loads the catalog and vectors).
const reopenStarted = performance.now();
const reopened = new EmbeddedSearchIndex(path.join(dir.path, 'index.db'), { dense, vectorCacheBytes });
await reopened.openModel(MODEL, embedder.dimension);
const reopenMs = performance.now() - reopenStarted;
const found = await reopened.countChunks(MODEL, projectId);
// (one search, so the scan thread counts too: it reads the int8 vectors the index keeps, shared)
await hybrid(reopened)(queries[0]!);
const heapAfter = rss();
rows.push(['restart: reopen and load the index (a saved graph is loaded, else built)', `${(reopenMs / 1000).toFixed(2)} s for ${found} chunks`]);
rows.push([
  'memory of the loaded index (RSS growth: heap, buffers, graph, the scan thread)',
  `${((heapAfter - heapBefore) / 2 ** 20).toFixed(0)} MiB, ${((heapAfter - heapBefore) / found).toFixed(0)} bytes per chunk (chunk text included)${gc ? '' : ' (run with --expose-gc)'}`,
]);
printTable(
  `search over ${built} chunks, embedded index, top 10, sequential queries unless said (the scan thread takes a second core) (HNSW expansion add/search ${dense.expansionAdd}/${dense.expansionSearch}; rescoring vectors kept: ${values['vector-cache-mb']} MiB)`,
  rows,
);
await embedder.dispose();
await reopened.close();
dir.remove();

if (SYNTHETIC > 0) await synthetic(SYNTHETIC, SYNTHETIC_DIM);

/** Part 2: clustered synthetic vectors (recall on random vectors means nothing). */
async function synthetic(n: number, dim: number): Promise<void> {
  const random = seededRandom(11);
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const centres = Array.from({ length: 1000 }, () => Float32Array.from({ length: dim }, gaussian));
  const vector = (centre: Float32Array) => {
    const v = Float32Array.from(centre, (c) => c + 0.6 * gaussian());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const floats = new Float32Array(n * dim); // full precision, outside the index: SQLite's role
  const ids: string[] = [];
  const catalog = new CatalogMemory();
  const project = 'synthetic';
  const before = rss() + floats.byteLength; // the float store is committed as it is written
  const memory = new ModelMemory(dim, 1024, { dense, fullVectors: (chunks) => new Map(chunks.map(({ chunkId: id }) => [id, floats.slice(Number(id.slice(2)) * dim, (Number(id.slice(2)) + 1) * dim)])) });
  memory.beginBulkLoad();
  const started = performance.now();
  const perMemo = 10;
  for (let i = 0; i < n; i += perMemo) {
    const memoId = `memo-${i / perMemo}`;
    catalog.set({
      memoId,
      projectId: project,
      version: 1,
      memo: { projectId: project, memoId, revision: 1, title: memoId, summary: '', source: null, clientReferenceId: null, memoType: 'text', tags: [], metadata: {}, archived: false, expirationDate: null },
    });
    for (let c = 0; c < perMemo && i + c < n; c++) {
      const v = vector(centres[Math.floor(random() * centres.length)]!);
      floats.set(v, (i + c) * dim);
      const id = `c:${i + c}`;
      ids.push(id);
      memory.add({ chunkId: id, memoId, projectId: project, revision: 1, index: c, content: '' }, v, { indices: [], values: [], length: 0 });
    }
  }
  const filled = performance.now();
  memory.endBulkLoad();
  const builtAt = performance.now();
  const bytes = rss() - before;
  const eligible = catalog.eligible(project, []);
  const probes = Array.from({ length: 200 }, () => vector(centres[Math.floor(random() * centres.length)]!));
  const out: [string, string][] = [
    ['build: quantize and store / HNSW graph (2 threads)', `${((filled - started) / 1000).toFixed(1)} s / ${((builtAt - filled) / 1000).toFixed(1)} s`],
    ['memory per chunk (RSS growth: int8 codes, graph, ids)', `${(bytes / n).toFixed(0)} bytes${gc ? '' : ' (run with --expose-gc)'}`],
    await measureOver(`dense top 10 (${memory.hasGraph(project) ? 'HNSW' : 'exact scan'} + rescoring)`, probes, QUERIES, (v) => memory.searchDense(v, eligible, 10, catalog, project)),
    await measureOver('dense top 100 (as hybrid search asks)', probes, QUERIES, (v) => memory.searchDense(v, eligible, 100, catalog, project)),
  ];
  let hit = 0;
  const exactStarted = performance.now();
  const recallProbes = probes.slice(0, 50);
  for (const v of recallProbes) {
    const { keys } = exactSearch(floats, v.slice(), dim, 10, MetricKind.IP, 0);
    const truth = new Set(Array.from(keys, (k) => ids[Number(k)]!));
    hit += memory.searchDense(v, eligible, 10, catalog, project).filter((h) => truth.has(h.chunkId)).length;
  }
  const exactMs = (performance.now() - exactStarted) / recallProbes.length;
  out.push(['dense recall@10 vs exact', (hit / (10 * recallProbes.length)).toFixed(4)]);
  out.push(['anchor: usearch exactSearch over the float vectors (all threads)', `${exactMs.toFixed(1)} ms per query (MEASURED.md: 44-62 ms at 1M x 384)`]);
  printTable(`synthetic: ${n} chunks x ${dim}-d clustered vectors, one project, the index's memory side`, out);
}
