export interface DenseSearchOptions {
  /** A project gets an HNSW graph once it holds this many chunks; below, dense search scans. */
  annMinChunks: number;
  /** The graph is used when the filters keep at least this share of the project's chunks. */
  annMinShare: number;
  /** HNSW connectivity (M), and candidate list sizes while adding and searching. */
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  /** At least this many graph neighbours are taken (twice the rescoring depth when that is more). */
  graphCandidates: number;
  /** Candidates beyond `limit` rescored with full-precision vectors. */
  rescoreMargin: number;
  /** Without a graph, from this many findable chunks the dense scan is the native SIMD one, not a JS loop. */
  simdScanMinChunks: number;
}

export const DEFAULT_DENSE_OPTIONS: Readonly<DenseSearchOptions> = Object.freeze({
  // Below this, an exact SIMD scan of the int8 vectors beats the graph at the search breadth that
  // holds recall@10 ≥ 0.99 (a scan grows with the chunks, the graph barely), and spares the graph's
  // memory and build.
  annMinChunks: 131_072,
  annMinShare: 0.25,
  // The offline model's sentence vectors (averaged GloVe) are a hard case for HNSW: these settings
  // hold recall@10 near 0.99 against an exact scan at 100k chunks (docs/benchmarks.md).
  connectivity: 32,
  expansionAdd: 200,
  expansionSearch: 800,
  graphCandidates: 512,
  rescoreMargin: 16,
  simdScanMinChunks: 512,
});
