import type { Reranker } from './port';
import { sigmoid } from './port';

type RerankApi = 'tei' | 'cohere';

interface RemoteRerankerOptions {
  /**
   * `tei`: POST `{baseUrl}/rerank` `{query, texts}` → `[{index, score}]` (Text Embeddings Inference).
   * `cohere`: POST `{baseUrl}/rerank` `{model, query, documents}` → `{results: [{index, relevance_score}]}`
   * (Cohere, Jina, vLLM; give `baseUrl` with its `/v1`).
   */
  api: RerankApi;
  baseUrl: string;
  model?: string;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

export class RerankError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RerankError';
  }
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

export class RemoteReranker implements Reranker {
  readonly name: string;
  private readonly url: string;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: RemoteRerankerOptions) {
    this.name = `${options.api}:${options.model ?? 'default'}`;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/rerank`;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async score(query: string, documents: readonly string[]): Promise<number[]> {
    if (documents.length === 0) return [];
    const { api, model } = this.options;
    const body =
      api === 'tei'
        ? { query, texts: documents, truncate: true, raw_scores: false }
        : { ...(model ? { model } : {}), query, documents, top_n: documents.length, return_documents: false };
    const reply = await this.post(body);
    const rows: unknown = api === 'tei' ? reply : (reply as { results?: unknown })?.results;
    if (!Array.isArray(rows)) throw new RerankError(`${this.url}: the reply holds no list of scores`);
    const scores = new Array<number>(documents.length).fill(Number.NaN);
    for (const row of rows as { index?: unknown; score?: unknown; relevance_score?: unknown }[]) {
      const value = api === 'tei' ? row.score : row.relevance_score;
      if (typeof row.index !== 'number' || typeof value !== 'number' || row.index < 0 || row.index >= documents.length)
        throw new RerankError(`${this.url}: a score row is malformed: ${JSON.stringify(row).slice(0, 200)}`);
      // Servers that return logits (outside [0, 1]) are mapped like a local cross-encoder's.
      scores[row.index] = value >= 0 && value <= 1 ? value : sigmoid(value);
    }
    if (scores.some(Number.isNaN)) throw new RerankError(`${this.url}: scored ${rows.length} of ${documents.length} documents`);
    return scores;
  }

  async dispose(): Promise<void> {}

  private async post(body: unknown): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const retries = this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      let failure: RerankError;
      try {
        const response = await this.doFetch(this.url, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
        if (response.ok) return await response.json();
        const text = (await response.text().catch(() => '')).slice(0, 300);
        failure = new RerankError(`${this.url} answered ${response.status} ${text}`, response.status);
        if (!RETRYABLE.has(response.status)) throw failure;
      } catch (error) {
        if (error instanceof RerankError && (error.status === undefined || !RETRYABLE.has(error.status))) throw error;
        failure = error instanceof RerankError ? error : new RerankError(`cannot reach ${this.url}: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`);
      }
      if (attempt >= retries) throw failure;
      await new Promise((resolve) => setTimeout(resolve, (this.options.retryBaseMs ?? 200) * 2 ** attempt));
    }
  }
}
