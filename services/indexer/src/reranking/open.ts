import type { IndexerConfig } from '../config';
import type { Reranker } from './port';

/** RERANKER decides: none (undefined), a local cross-encoder, or a remote `/rerank` server. */
export async function openReranker(config: IndexerConfig): Promise<Reranker | undefined> {
  if (config.RERANKER === 'none') return undefined;
  if (config.RERANKER === 'local') {
    const { LocalReranker } = await import('./local');
    return LocalReranker.load({ model: config.RERANKER_MODEL!, modelsDir: config.MEMEX_MODELS_DIR });
  }
  const { RemoteReranker } = await import('./remote');
  return new RemoteReranker({
    api: config.RERANKER,
    baseUrl: config.RERANKER_URL!,
    ...(config.RERANKER_MODEL ? { model: config.RERANKER_MODEL } : {}),
    ...(config.RERANKER_API_KEY ? { apiKey: config.RERANKER_API_KEY } : {}),
    timeoutMs: config.RERANKER_TIMEOUT_MS,
  });
}
