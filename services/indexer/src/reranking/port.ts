/**
 * A reranker scores each candidate passage against the query, seeing both together (a
 * cross-encoder), which orders the fused candidates better than either first-stage ranking.
 * Adapters: a local transformers.js cross-encoder, remote `/rerank` servers (TEI; Cohere, Jina and
 * vLLM shape), and none (no reranker configured).
 */
export interface Reranker {
  /** What is configured, for logs and readiness, e.g. `tei:BAAI/bge-reranker-base`. */
  readonly name: string;
  /** Relevance of each document to the query in [0, 1] (higher is more relevant), in input order. */
  score(query: string, documents: readonly string[]): Promise<number[]>;
  dispose(): Promise<void>;
}

/** Logits from a cross-encoder become relevance in (0, 1). */
export const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
