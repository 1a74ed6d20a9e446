/**
 * The embedded index's two scans, as a small native addon compiled by `pnpm install`:
 *
 * - Dense (native/scan.c): the `k` best rows of a block of int8 codes for one quantized query, by
 *   inner product or cosine, keeping only the best k as it goes; given a list of slots, only those
 *   rows, at a cost in proportion to the list (keeping and sorting every distance, as usearch's
 *   exactSearch does, costs more per row). Then, for the rows found, the full-precision query's
 *   estimates against their codes, and its products with their stored vectors (halves or floats)
 *   for rescoring.
 * - Sparse (native/sparse.c): BM25's top k over a project's postings by MaxScore, with the same
 *   arithmetic, in the same order, as the indexer's JS reference that scores every posting.
 *
 * Where the addon is found: beside a bundle (deploy/bundle.ts copies it next to dist/<name>.mjs),
 * or where node-gyp built it in this package (build/Release), for the TypeScript sources.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The addon's file name, as node-gyp builds it and as a bundle carries it. */
export const VECTOR_SCAN_ADDON = 'vector_scan.node';

interface Addon {
  scan(codes: Int8Array, total: number, dimension: number, query: Int8Array, k: number, cosine: boolean, slots?: Uint32Array, unordered?: boolean): Uint32Array;
  sparse(
    slots: Int32Array[],
    tfs: Uint16Array[],
    terms: Float64Array,
    lengths: Float32Array,
    mask: Uint8Array,
    base: number,
    perLength: number,
    k: number,
    sums: Float64Array,
    touched: Int32Array,
  ): Float64Array;
  estimate(codes: Int8Array, dimension: number, scales: Float32Array, query: Float32Array, slots: Uint32Array, out: Float64Array): void;
  exact(vectors: readonly (Uint16Array | Float32Array | undefined)[], query: Float32Array, out: Float64Array): void;
  kernel(name?: string): string;
}

/** Where this module finds the addon, in the order tried. */
function candidates(): string[] {
  return [new URL(`./${VECTOR_SCAN_ADDON}`, import.meta.url), new URL(`../build/Release/${VECTOR_SCAN_ADDON}`, import.meta.url)].map((u) => fileURLToPath(u));
}

/**
 * The addon's path: the first candidate that exists. Throws, naming where it looked, when there is
 * none (the workspace was installed with scripts off, or a bundle was copied without it).
 */
export function vectorScanAddonPath(): string {
  const tried = candidates();
  const found = tried.find((p) => existsSync(p));
  if (!found) throw new Error(`the vector scan addon is not built (looked for ${tried.join(', ')}): run pnpm install, or pnpm --filter @memex/vector-scan install`);
  return found;
}

let addon: Addon | undefined;

function load(): Addon {
  addon ??= createRequire(import.meta.url)(vectorScanAddonPath()) as Addon;
  return addon;
}

/** One exact scan: the first `total` rows of `codes` (`dimension` bytes each) against `query`. */
export interface VectorScan {
  codes: Int8Array;
  total: number;
  dimension: number;
  query: Int8Array;
  /** How many of the best rows to return (at most the rows scanned). */
  k: number;
  /** By cosine (each row's own norm) instead of by inner product. */
  cosine?: boolean;
  /** Only these rows (ascending, each below `total`); every row when absent. */
  slots?: Uint32Array;
  /** The k best in no order (for a caller that ranks them again): spares sorting them. */
  unordered?: boolean;
}

/**
 * The slots of the `k` best rows, best first (unless `unordered`); equal scores rank the lower slot
 * first, and which rows tie into the last places depends on that order alone.
 */
export function scanTopK(s: VectorScan): Uint32Array {
  return load().scan(s.codes, s.total, s.dimension, s.query, s.k, s.cosine ?? false, s.slots, s.unordered ?? false);
}

/** Rows' estimates for a full-precision query: see {@link estimateRows}. */
export interface RowEstimates {
  codes: Int8Array;
  dimension: number;
  /** Each row's scale: its codes times its scale approximate its vector. */
  scales: Float32Array;
  query: Float32Array;
  /** The rows to estimate, in any order (each with codes and a scale). */
  slots: Uint32Array;
  /** Where the estimates go, one per slot, in the slots' order. */
  out: Float64Array;
}

/**
 * Each slot's estimate: the full-precision query's inner product with the row's int8 codes, in
 * double, times the row's scale (a cosine's estimate where vectors are unit length). The kernels
 * add in the same order, so they give the same bits (native/scan.c, PLAIN_DOT).
 */
export function estimateRows(e: RowEstimates): Float64Array {
  load().estimate(e.codes, e.dimension, e.scales, e.query, e.slots, e.out);
  return e.out;
}

/**
 * Each vector's inner product with the query, in double: a vector of halves (IEEE binary16 bits, as
 * the index keeps full-precision vectors at rest; converted by F16C where the CPU has it) or of
 * floats; NaN for a vector that is missing or not of the query's length. The kernels give the same
 * bits, the same values as a plain loop but for a double's rounding (see native/scan.c).
 */
export function exactProducts(vectors: readonly (Uint16Array | Float32Array | undefined)[], query: Float32Array, out = new Float64Array(vectors.length)): Float64Array {
  load().exact(vectors, query, out);
  return out;
}

/** The dot product kernel in use: the one the addon chose for this CPU at load (`avx2` or `plain`), unless switched. */
export function vectorScanKernel(): string {
  return load().kernel();
}

/**
 * Switches every thread of this process to a kernel (for tests and benchmarks: `plain` runs the
 * portable loops on a CPU that has AVX2), for the scans and for BM25's sweep to its k-th best sum
 * alike; throws for one this CPU lacks.
 */
export function useVectorScanKernel(name: 'avx2' | 'plain'): string {
  return load().kernel(name);
}

/** A query term's postings in a sparse scan. */
export interface SparseTerm {
  /** The chunks (slots) holding the term, ascending: the first `n` entries. */
  slots: Int32Array;
  /** The term's count in each of those chunks. */
  tfs: Uint16Array;
  n: number;
  /** The term's BM25 weight: idf × query tf × (k1 + 1). */
  weight: number;
  /** The most it adds to any chunk's score (MaxScore skips terms by it: it must not be less). */
  bound: number;
}

/** One BM25 top-k: a posting adds `weight × tf / (tf + base + perLength × lengths[slot])` to its slot. */
export interface SparseScan {
  /** In the order their contributions are summed: highest bound first. */
  terms: readonly SparseTerm[];
  /** Each slot's length in terms. */
  lengths: Float32Array;
  /** 1 for each slot that may be found (in the project and its filters), 0 for the others. */
  mask: Uint8Array;
  base: number;
  perLength: number;
  k: number;
  /** Scratch of as many entries as there are slots, all zero (and left so). */
  sums: Float64Array;
  /** Scratch of one more entry than there are slots. */
  touched: Int32Array;
}

/** A sparse scan's hits: every slot scoring at least the k-th best score, in no order. */
export interface SparseHits {
  slots: number[];
  scores: number[];
}

/**
 * BM25's top k by MaxScore (see native/sparse.c). More than k come back when several tie with the
 * k-th score, so that the caller can break ties by its own key.
 */
export function sparseTopK(s: SparseScan): SparseHits {
  const n = s.terms.length;
  const triples = new Float64Array(3 * n);
  const slots = new Array<Int32Array>(n);
  const tfs = new Array<Uint16Array>(n);
  for (let t = 0; t < n; t++) {
    const term = s.terms[t]!;
    slots[t] = term.slots;
    tfs[t] = term.tfs;
    triples[3 * t] = term.n;
    triples[3 * t + 1] = term.weight;
    triples[3 * t + 2] = term.bound;
  }
  const pairs = load().sparse(slots, tfs, triples, s.lengths, s.mask, s.base, s.perLength, s.k, s.sums, s.touched);
  const hits: SparseHits = { slots: new Array<number>(pairs.length / 2), scores: new Array<number>(pairs.length / 2) };
  for (let i = 0; i < pairs.length; i += 2) {
    hits.scores[i / 2] = pairs[i]!;
    hits.slots[i / 2] = pairs[i + 1]!;
  }
  return hits;
}
