import { join } from 'node:path';
import type { Logger } from '@memex/runtime';
import type { IndexerConfig } from './config';
import { EmbeddedSearchIndex } from './searchIndex/embedded';
import type { SearchIndex } from './searchIndex/port';

/** Qdrant when QDRANT_URL is set; otherwise the embedded index in the data directory. */
export async function openSearchIndex(config: IndexerConfig, logger?: Logger): Promise<SearchIndex> {
  if (config.QDRANT_URL) {
    const { QdrantSearchIndex } = await import('./searchIndex/qdrant');
    return QdrantSearchIndex.connect(config.QDRANT_URL, {
      ...(config.QDRANT_API_KEY ? { apiKey: config.QDRANT_API_KEY } : {}),
      collectionPrefix: config.QDRANT_COLLECTION_PREFIX,
      bm25AvgDocLength: config.QDRANT_BM25_AVG_DOC_LENGTH,
    });
  }
  return new EmbeddedSearchIndex(join(config.MEMEX_DATA_DIR, 'indexer', 'index.db'), {
    compact: config.MEMEX_SEAL_DEFLATE,
    vectorCacheBytes: config.INDEXER_VECTOR_CACHE_MB * 1024 * 1024,
    scanThread: config.INDEXER_SCAN_THREAD,
    onScanThreadFailure: (reason) => logger?.warn({ reason }, 'dense scan thread stopped; scans run on the main thread'),
    // A graph built rather than loaded at start is worth knowing about: it takes minutes at a million chunks.
    onGraph: (event) => logger?.info(event, event.outcome === 'loaded' ? 'HNSW graph loaded' : 'HNSW graph built'),
  });
}
