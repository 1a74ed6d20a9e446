/**
 * The embedded index's exact int8 scan (native/scan.c, compiled by `pnpm install`): the `k` best
 * rows of a block of int8 codes for one quantized query, by inner product or cosine, keeping only
 * the best k as it goes; given a list of slots, only those rows, at a cost in proportion to the list. usearch's exactSearch, which it replaces, keeps every distance and sorts
 * them all, at two to three times the cost per row (bench/search.bench.ts prints both).
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
  scan(codes: Int8Array, total: number, dimension: number, query: Int8Array, k: number, cosine: boolean, slots?: Uint32Array): Uint32Array;
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
}

/** The slots of the `k` best rows, best first; equal scores rank the lower slot first. */
export function scanTopK(s: VectorScan): Uint32Array {
  return load().scan(s.codes, s.total, s.dimension, s.query, s.k, s.cosine ?? false, s.slots);
}

/** The dot product kernel in use: the one the addon chose for this CPU at load (`avx2` or `plain`), unless switched. */
export function vectorScanKernel(): string {
  return load().kernel();
}

/**
 * Switches every thread of this process to a kernel (for tests and benchmarks: `plain` runs the
 * portable loop on a CPU that has AVX2); throws for one this CPU lacks.
 */
export function useVectorScanKernel(name: 'avx2' | 'plain'): string {
  return load().kernel(name);
}
