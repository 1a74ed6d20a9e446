/**
 * Embeddings from a model server: OpenAI-compatible `/v1/embeddings` (what vLLM, TEI, llama.cpp
 * server, LM Studio, Ollama's `/v1` and hosted APIs serve) or Ollama's native `/api/embed`.
 * Selected by an `EMBEDDING_MODEL` of `openai:<model>` or `ollama:<model>` with `EMBEDDING_URL`; the
 * whole string is the index's model key, so switching to, from or between remote models re-indexes
 * by replay like any model switch, and the dimension (learned from a probe) is recorded with it.
 */
import type { Embedder } from './port';

type RemoteEmbeddingApi = 'openai' | 'ollama';

interface RemoteEmbedderOptions {
  /** The index's model key, e.g. `openai:nomic-embed-text`. */
  modelId: string;
  api: RemoteEmbeddingApi;
  /** The model name the server knows. */
  model: string;
  /** openai: the API base ending in the version (`http://host:8000/v1`); ollama: the server root. */
  baseUrl: string;
  apiKey?: string;
  /** Texts per request. */
  batchSize: number;
  queryPrefix?: string;
  documentPrefix?: string;
  /** Longest one request may take. */
  timeoutMs?: number;
  /** Retries on 429/5xx/connection failure. */
  maxRetries?: number;
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

export class RemoteEmbeddingError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RemoteEmbeddingError';
  }
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** `openai:<model>` / `ollama:<model>` → the API and the server's model name; anything else is local. */
export function parseRemoteModel(model: string): { api: RemoteEmbeddingApi; name: string } | undefined {
  const match = /^(openai|ollama):(.+)$/.exec(model);
  return match ? { api: match[1] as RemoteEmbeddingApi, name: match[2]! } : undefined;
}

function normalise(values: readonly number[], dimension: number | undefined, where: string): Float32Array {
  if (dimension !== undefined && values.length !== dimension) throw new RemoteEmbeddingError(`${where}: got a vector of ${values.length} dimensions, expected ${dimension}`);
  const v = Float32Array.from(values);
  let norm = 0;
  for (const x of v) {
    if (!Number.isFinite(x)) throw new RemoteEmbeddingError(`${where}: the vector holds a non-finite number`);
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

export class RemoteEmbedder implements Embedder {
  readonly modelId: string;
  private dim: number | undefined;
  private disposed = false;
  private readonly base: string;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: RemoteEmbedderOptions) {
    this.modelId = options.modelId;
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get dimension(): number {
    if (this.dim === undefined) throw new Error(`the dimension of ${this.modelId} is not known yet`);
    return this.dim;
  }

  /** Learns the width from one request (called once when the model is opened). */
  async probeDimension(): Promise<void> {
    const [v] = await this.request(['dimension probe']);
    this.dim = v!.length;
    if (this.dim === 0) throw new RemoteEmbeddingError(`${this.modelId}: the server returned an empty vector`);
  }

  async embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
    if (this.disposed) throw new Error(`embedder for "${this.modelId}" has been disposed`);
    if (kind !== 'query' && kind !== 'document') throw new Error(`embed: kind must be 'query' or 'document', got ${String(kind)}`);
    const prefix = (kind === 'query' ? this.options.queryPrefix : this.options.documentPrefix) ?? '';
    const out = new Array<Float32Array>(texts.length);
    // Servers reject empty input; a blank text gets the zero vector, as the local models give it.
    const asked: number[] = [];
    texts.forEach((t, i) => {
      if (t.trim() === '') out[i] = new Float32Array(this.dimension);
      else asked.push(i);
    });
    for (let start = 0; start < asked.length; start += this.options.batchSize) {
      const batch = asked.slice(start, start + this.options.batchSize);
      const vectors = await this.request(batch.map((i) => prefix + texts[i]!));
      batch.forEach((textIndex, j) => (out[textIndex] = vectors[j]!));
    }
    return out;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const { api, model } = this.options;
    const url = api === 'openai' ? `${this.base}/embeddings` : `${this.base}/api/embed`;
    const body = JSON.stringify(api === 'openai' ? { model, input, encoding_format: 'float' } : { model, input, truncate: true });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const retries = this.options.maxRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      let failure: RemoteEmbeddingError;
      try {
        const response = await this.doFetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.options.timeoutMs ?? 60_000) });
        if (response.ok) return this.parse(await response.json(), input.length);
        const text = await response.text().catch(() => '');
        let detail = text.trim();
        try {
          const parsed = JSON.parse(text) as { error?: string | { message?: string } };
          detail = (typeof parsed.error === 'string' ? parsed.error : parsed.error?.message) ?? detail;
        } catch {
          // not JSON: keep the text
        }
        failure = new RemoteEmbeddingError(`${this.modelId}: ${url} answered ${response.status} ${detail.slice(0, 300)}`, response.status);
        if (!RETRYABLE.has(response.status)) throw failure;
      } catch (error) {
        if (error instanceof RemoteEmbeddingError && (error.status === undefined || !RETRYABLE.has(error.status))) throw error;
        failure =
          error instanceof RemoteEmbeddingError
            ? error
            : new RemoteEmbeddingError(`${this.modelId}: cannot reach ${url}: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`);
      }
      if (attempt >= retries) throw failure;
      await new Promise((resolve) => setTimeout(resolve, (this.options.retryBaseMs ?? 250) * 2 ** attempt));
    }
  }

  private parse(reply: unknown, count: number): Float32Array[] {
    const where = `${this.modelId}`;
    let rows: unknown[] | undefined;
    if (this.options.api === 'openai') {
      const data = (reply as { data?: { index?: number; embedding?: unknown }[] }).data;
      if (Array.isArray(data)) rows = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding);
    } else {
      rows = (reply as { embeddings?: unknown[] }).embeddings;
    }
    if (!Array.isArray(rows) || rows.length !== count) throw new RemoteEmbeddingError(`${where}: expected ${count} embeddings, got ${Array.isArray(rows) ? rows.length : 'none'}`);
    return rows.map((row) => {
      if (!Array.isArray(row) || row.some((x) => typeof x !== 'number')) throw new RemoteEmbeddingError(`${where}: an embedding is not an array of numbers`);
      return normalise(row as number[], this.dim, where);
    });
  }
}

/** Opens a remote embedder and learns its dimension. */
export async function loadRemoteEmbedder(options: RemoteEmbedderOptions): Promise<RemoteEmbedder> {
  const embedder = new RemoteEmbedder(options);
  await embedder.probeDimension();
  return embedder;
}
