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
  // holds recall@10 ≥ 0.99 (bench/search.bench.ts, 100k chunks: scan 1.75 ms, graph 2.3 ms; a scan
  // grows with the chunks, the graph barely), and it spares the graph's memory and build.
  annMinChunks: 131_072,
  annMinShare: 0.25,
  // The offline model's sentence vectors (averaged GloVe) are a hard case for HNSW, as GloVe is in
  // ann-benchmarks. Measured with bench/search.bench.ts at 100k chunks, recall@10 against an exact
  // float scan (the scan path itself: 1.0000): M 16, search 400, 308 neighbours 0.9726; M 32 0.9799;
  // M 16, search 800, 615 neighbours 0.9893; M 24, add 300, search 600 0.9899; M 32, search 800,
  // 615 neighbours 0.9925, at about twice the dense ranking's time of the first and +220 bytes/chunk.
  connectivity: 32,
  expansionAdd: 200,
  expansionSearch: 800,
  graphCandidates: 512,
  rescoreMargin: 16,
  simdScanMinChunks: 512,
});
