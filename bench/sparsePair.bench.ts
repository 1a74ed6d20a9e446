/**
 * BM25's native top k alone, through two trees' builds of the vector-scan addon loaded in one
 * process and called in turn on the same prepared queries: the before/after of a change to
 * native/sparse.c, measured where neither the machine's drift nor the rest of a search (the query's
 * embedding, the candidates, fusion: bench:search-pair's lexical ranking) blurs it.
 *
 *   git worktree add ../base <rev> && (cd ../base && pnpm install --frozen-lockfile --offline)
 *   pnpm bench:search-pair --base ../base --chunks 100000 --rounds 0 --index /tmp/pair100k   # builds the index once
 *   pnpm bench:sparse-pair --base ../base --index /tmp/pair100k [--rounds 30] [--k 100] [--evict-mb 32]
 *
 * The index is one bench:search-pair built (its `--index` directory). This tree's index code
 * prepares each Cranfield and Vaswani query's scan once (ModelMemory.sparseScan: the terms, lengths,
 * findable slots and scratch searchSparse hands the addon); each tree's own @memex/vector-scan
 * module (and through it its own addon) then runs them. First every query through both, and the
 * hits compared (the same slots with the same scores to the bit); then `--rounds` rounds of all the
 * queries, the trees' order alternating by round. `--evict-mb`: that much memory read before each
 * query, untimed, to start it with cold CPU caches, as under load. Printed per tree: the median and
 * the fastest round's mean time per query, and the ratio of the medians.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { encodeQuery } from '@memex/text';
import type { SparseHits, SparseScan } from '@memex/vector-scan';
import { EmbeddedSearchIndex } from '../services/indexer/src/searchIndex/embedded/sqliteIndex';
import { CacheEvictor } from './support/coldCaches';
import { evalQueryTexts } from './support/sentenceCorpus';
import { percentile } from './support/stats';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    index: { type: 'string' },
    rounds: { type: 'string', default: '30' },
    k: { type: 'string', default: '100' },
    'evict-mb': { type: 'string', default: '0' },
  },
});
const usage = 'usage: pnpm bench:sparse-pair --base <another checkout, installed> --index <a directory bench:search-pair built> [--rounds 30] [--k 100] [--evict-mb <MiB>]';
if (!values.base || !values.index) throw new Error(usage);
const indexDir = path.resolve(values.index);
const projectFile = path.join(indexDir, 'project');
if (!existsSync(projectFile)) throw new Error(`${indexDir} holds no index bench:search-pair built (no 'project' file): run it with --index ${values.index} --rounds 0 first`);
const ROUNDS = Number(values.rounds);
const K = Number(values.k);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || !Number.isInteger(K) || K < 1) throw new Error(usage);
const MODEL = 'memex-glove-100d';
const REPO_ROOT = path.resolve(import.meta.dirname, '..');
const BASE_ROOT = path.resolve(values.base);

type TopK = (scan: SparseScan) => SparseHits;
/** A tree's own sparseTopK: its module, which loads its own build of the addon. */
async function treeTopK(root: string): Promise<TopK> {
  const module = (await import(path.join(root, 'packages', 'vector-scan', 'src', 'index.ts'))) as { sparseTopK: TopK };
  return module.sparseTopK;
}
const trees: Record<'base' | 'this', TopK> = { base: await treeTopK(BASE_ROOT), this: await treeTopK(REPO_ROOT) };

const index = new EmbeddedSearchIndex(path.join(indexDir, 'index.db'), { scanThread: false });
await index.openModel(MODEL, 100);
const projectId = readFileSync(projectFile, 'utf8');
const { memory, catalog } = index.modelMemory(MODEL) ?? {};
if (!memory || !catalog) throw new Error(`${indexDir} holds no chunks of ${MODEL}`);
const eligible = catalog.eligible(projectId, []);
const scans = evalQueryTexts()
  .map((query) => memory.sparseScan(encodeQuery(query), projectId, eligible, K))
  .filter((scan): scan is SparseScan => scan !== undefined);

/** The hits as one comparable string: each slot with its score's exact bits, in slot order. */
const key = (hits: SparseHits) =>
  hits.slots
    .map((slot, i) => [slot, hits.scores[i]!] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([slot, score]) => `${slot}:${score}`)
    .join(',');
let same = 0;
for (const scan of scans) if (key(trees.base(scan)) === key(trees.this(scan))) same += 1;

const caches = new CacheEvictor(Number(values['evict-mb']));
const perQuery: Record<'base' | 'this', number[]> = { base: [], this: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const name of round % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
    let total = 0;
    for (const scan of scans) {
      caches.evict();
      const started = performance.now();
      trees[name](scan);
      total += performance.now() - started;
    }
    perQuery[name].push((1000 * total) / scans.length);
  }
}
await index.close();

const median = (values: number[]) => percentile(values, 50);
const figures = (name: 'base' | 'this') => `median ${median(perQuery[name]).toFixed(1)} µs  fastest ${Math.min(...perQuery[name]).toFixed(1)} µs a query`;
console.log(`BM25's native top ${K} over ${indexDir}, ${scans.length} queries × ${ROUNDS} rounds, alternating${caches.mb > 0 ? `, ${caches.mb} MiB read before each query` : ''}`);
console.log(`  base ${BASE_ROOT}: ${figures('base')}`);
console.log(`  this ${REPO_ROOT}: ${figures('this')}   (median ${(median(perQuery.this) / median(perQuery.base)).toFixed(2)}× base; the same hits and scores for ${same} of ${scans.length} queries)`);
