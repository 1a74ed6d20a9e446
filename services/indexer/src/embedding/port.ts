/** The embedding port: a model that turns texts into vectors (transformers.js, the static model, or a remote API). */
export interface Embedder {
  /** The model as configured, e.g. "memex-glove-100d" or "Xenova/all-MiniLM-L6-v2". */
  readonly modelId: string;
  readonly dimension: number;
  /** L2-normalised, mean-pooled vectors, one per text, in input order. */
  embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}
