/**
 * One search index, two trees of the code, searched in turn query by query in one process: the
 * before/after of a search change measured where the machine's drift cannot tell them apart (on
 * the project's 2-core machines whole runs of `bench:search` differ by up to 2× within minutes; the
 * same query through both trees a moment apart does not).
 *
 *   git worktree add ../base <rev> && (cd ../base && pnpm install --frozen-lockfile --offline)
 *   pnpm bench:search-pair --base ../base [--chunks 100000] [--rounds 5] [--index <dir>] [--vector-cache-mb <MiB>] [--evict-mb <MiB>]
 *
 * The index (`--chunks` chunks of Vaswani sentences, 10 a memo, the offline 100-d model, built by
 * bench:search's builder, support/sentenceCorpus.ts) is built by this tree into `--index` (default:
 * a temporary directory, removed after) unless that directory already holds one this script built.
 * Each tree then opens the same file with its own EmbeddedSearchIndex, ModelSet and hybridSearch
 * (and its own native addon), the dense scan in the searching thread, rescoring vectors kept once
 * read as the indexer keeps them by default.
 * - `--vector-cache-mb 0`: none kept, every search reads its rescored vectors from SQLite, as a
 *   large index does for queries unlike those before.
 * - `--evict-mb 32`: that much memory is read before each search, untimed, so that it starts with
 *   the CPU caches cold, as under load, when the gateway, NATS and the load generator share them.
 * Every Cranfield and Vaswani query is searched `--rounds` times in each tree, the trees' order
 * alternating by round. Printed per ranking (hybrid, dense alone, lexical alone: BM25 and the query's
 * embedding): p50, p10 and mean latency per tree, and how many queries both trees answered with the
 * same hits (chunks, in order), how many of those with the same distances to the bit, and the largest
 * difference otherwise.
 * `--base .` (this tree against itself) shows the method's own spread: 0.96-1.00× on the
 * 2026-11-28 machines, so a change of a few percent needs more than one run to tell.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '@memex/runtime';
import { seededRandom } from '@memex/testing';
import { IndexerEnv } from '../services/indexer/src/config';
import { loadEmbedder } from '../services/indexer/src/embedding/embedder';
import { EmbeddedSearchIndex } from '../services/indexer/src/searchIndex/embedded/sqliteIndex';
import { CacheEvictor } from './support/coldCaches';
import { evalQueryTexts, vaswaniSentences, writeSentenceMemo } from './support/sentenceCorpus';
import { percentile } from './support/stats';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    chunks: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    index: { type: 'string' },
    'vector-cache-mb': { type: 'string' },
    'evict-mb': { type: 'string', default: '0' },
  },
});
if (!values.base) throw new Error('usage: pnpm bench:search-pair --base <another checkout, installed> [--chunks 100000] [--rounds 5] [--index <dir>] [--vector-cache-mb <MiB>] [--evict-mb <MiB>]');
const REPO_ROOT = path.resolve(import.meta.dirname, '..');
const BASE_ROOT = path.resolve(values.base);
const CHUNKS = Number(values.chunks);
const ROUNDS = Number(values.rounds);
const MODEL = 'memex-glove-100d';
const CHUNKS_PER_MEMO = 10;
/** Rescoring vectors kept once read, as the indexer keeps them by default (INDEXER_VECTOR_CACHE_MB; the warm-up fills it). */
const VECTOR_CACHE_BYTES = Number(values['vector-cache-mb'] ?? IndexerEnv.properties.INDEXER_VECTOR_CACHE_MB.default) * 1024 * 1024;
const queries = evalQueryTexts();
const caches = new CacheEvictor(Number(values['evict-mb']));

const indexDir = values.index ? path.resolve(values.index) : path.join(tmpdir(), `memex-search-pair-${process.pid}`);
const indexFile = path.join(indexDir, 'index.db');
/** The project the index's chunks are in, written beside it when it is built. */
const projectFile = path.join(indexDir, 'project');
const temporary = !values.index;

async function build(): Promise<void> {
  mkdirSync(indexDir, { recursive: true });
  const sentences = vaswaniSentences();
  const embedder = await loadEmbedder({ model: MODEL, modelsDir: path.join(REPO_ROOT, 'models'), allowRemote: false });
  const index = new EmbeddedSearchIndex(indexFile, { scanThread: false });
  await index.openModel(MODEL, embedder.dimension);
  const projectId = randomUUID();
  const random = seededRandom(7);
  const started = Date.now();
  for (let m = 0, built = 0; built < CHUNKS; m++) {
    const { texts } = await writeSentenceMemo(index, embedder, MODEL, { projectId, memoId: randomUUID(), ordinal: m, chunks: Math.min(CHUNKS_PER_MEMO, CHUNKS - built), sentences, random });
    built += texts.length;
  }
  await index.graphsBuilt();
  await index.close();
  writeFileSync(projectFile, projectId);
  console.log(`built ${CHUNKS} chunks into ${indexDir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

type Ranking = 'hybrid' | 'dense' | 'lexical';
interface Tree {
  close(): Promise<void>;
  search(query: string, ranking: Ranking): Promise<{ hits: { chunkId: string; distance: number }[] }>;
}

/** A tree's own search code over the shared index file (its modules, and through them its native addon). */
async function openTree(root: string): Promise<Tree> {
  const source = (file: string) => import(path.join(root, 'services', 'indexer', 'src', file));
  const [{ loadEmbedder: load }, { hybridSearch }, { EmbeddedSearchIndex: Index }, { ModelSet }] = await Promise.all([
    source('embedding/embedder.ts'),
    source('search/hybrid.ts'),
    // (where the tree keeps it: searchIndex/embedded/ since the index was split by concern)
    source(existsSync(path.join(root, 'services', 'indexer', 'src', 'searchIndex', 'embedded', 'sqliteIndex.ts')) ? 'searchIndex/embedded/sqliteIndex.ts' : 'searchIndex/embedded.ts'),
    source('state/models.ts'),
  ]);
  const embedder = await load({ model: MODEL, modelsDir: path.join(root, 'models'), allowRemote: false });
  const index = new Index(indexFile, { scanThread: false, vectorCacheBytes: VECTOR_CACHE_BYTES });
  await index.openModel(MODEL, embedder.dimension);
  const projectId = readFileSync(projectFile, 'utf8');
  const models = new ModelSet(async () => embedder, index, silentLogger());
  await models.apply({ activeModel: MODEL });
  const options = { lexicalWeight: 0.85, candidates: 100 };
  return {
    close: () => index.close(),
    search: (query, ranking) => hybridSearch(index, models, { projectId, query, filters: [], limit: 10, ...(ranking === 'hybrid' ? {} : { ranking }) }, options),
  };
}

if (!existsSync(projectFile)) await build();
const trees: Record<'base' | 'this', Tree> = { base: await openTree(BASE_ROOT), this: await openTree(REPO_ROOT) };
console.log(`\nsearches over ${indexFile}, base ${BASE_ROOT} vs this tree ${REPO_ROOT}, ${queries.length} queries × ${ROUNDS} rounds each, alternating, rescoring vectors kept: ${VECTOR_CACHE_BYTES / 1024 / 1024} MiB${caches.mb > 0 ? `, ${caches.mb} MiB read before each search` : ''}`);
for (const ranking of ['hybrid', 'dense', 'lexical'] as const) {
  for (const tree of Object.values(trees)) for (const q of queries) await tree.search(q, ranking); // warm-up (and the rescoring caches)
  // the same chunks in the same order, and of those, with distances the same to the bit
  let same = 0;
  let sameDistances = 0;
  let largestDifference = 0;
  for (const q of queries) {
    const [a, b] = [await trees.base.search(q, ranking), await trees.this.search(q, ranking)];
    if (a.hits.length !== b.hits.length || a.hits.some((h, i) => h.chunkId !== b.hits[i]!.chunkId)) continue;
    same += 1;
    const difference = Math.max(0, ...a.hits.map((h, i) => Math.abs(h.distance - b.hits[i]!.distance)));
    if (difference === 0) sameDistances += 1;
    largestDifference = Math.max(largestDifference, difference);
  }
  const latencies: Record<'base' | 'this', number[]> = { base: [], this: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const);
    for (const q of queries) {
      for (const name of order) {
        caches.evict();
        const started = performance.now();
        await trees[name].search(q, ranking);
        latencies[name].push(performance.now() - started);
      }
    }
  }
  const figures = (l: number[]) => `p50 ${percentile(l, 50).toFixed(3)} ms  p10 ${percentile(l, 10).toFixed(3)} ms  mean ${(l.reduce((s, x) => s + x, 0) / l.length).toFixed(3)} ms`;
  console.log(`  ${ranking.padEnd(7)} base: ${figures(latencies.base)}`);
  console.log(`  ${''.padEnd(7)} this: ${figures(latencies.this)}   (p50 ${(percentile(latencies.this, 50) / percentile(latencies.base, 50)).toFixed(2)}× base; same hits for ${same} of ${queries.length} queries, ${sameDistances} of them with the same distances${sameDistances < same ? `, the others within ${largestDifference.toExponential(1)}` : ''})`);
}
for (const tree of Object.values(trees)) await tree.close();
if (temporary) rmSync(indexDir, { recursive: true, force: true });
