import { join } from 'node:path';
import type { Logger } from '@memex/runtime';
import { vectorScanKernel } from '@memex/vector-scan';
import type { IndexerConfig } from '../config';
import { type CpuLimits, describeCpuLimits, effectiveCores, readCpuLimits } from './embedded/cpuLimits';
import { EmbeddedSearchIndex } from './embedded/sqliteIndex';
import type { SearchIndex } from './port';

/**
 * INDEXER_SCAN_THREAD: `auto` scans on a second thread where the process may keep more than 2 cores
 * busy, and on 2 or fewer only while the machine has CPU to spare (`when-spare`: see SpareCpuGate):
 * there the gateway, NATS and the clients share the cores, and a thread always in use costs the
 * stack's throughput under mixed load though it speeds a search up (docs/benchmarks.md).
 * The cores are those of effectiveCores: the cpuset, capped by the cgroup's CPU quota.
 */
export function scanThreadEnabled(setting: IndexerConfig['INDEXER_SCAN_THREAD'], cores = effectiveCores(readCpuLimits())): boolean | 'when-spare' {
  return setting === 'auto' ? (cores > 2 ? true : 'when-spare') : setting === 'true';
}

/** Qdrant when QDRANT_URL is set; otherwise the embedded index in the data directory. */
export async function openSearchIndex(config: IndexerConfig, logger?: Logger, cpu: CpuLimits = readCpuLimits()): Promise<SearchIndex> {
  if (config.QDRANT_URL) {
    const { QdrantSearchIndex } = await import('./qdrant/qdrantIndex');
    return QdrantSearchIndex.connect(config.QDRANT_URL, {
      ...(config.QDRANT_API_KEY ? { apiKey: config.QDRANT_API_KEY } : {}),
      collectionPrefix: config.QDRANT_COLLECTION_PREFIX,
      bm25AvgDocLength: config.QDRANT_BM25_AVG_DOC_LENGTH,
    });
  }
  // Loads the scans' native addon (dense and BM25) now: one missing from a build fails the start, not the first search.
  const kernel = vectorScanKernel();
  const scanThread = scanThreadEnabled(config.INDEXER_SCAN_THREAD, effectiveCores(cpu));
  logger?.info({ kernel, scanThread, cpu: describeCpuLimits(cpu) }, 'scan addon loaded (dense and BM25)');
  return new EmbeddedSearchIndex(join(config.MEMEX_DATA_DIR, 'indexer', 'index.db'), {
    compact: config.MEMEX_SEAL_DEFLATE,
    vectorCacheBytes: config.INDEXER_VECTOR_CACHE_MB * 1024 * 1024,
    writeTurnMs: config.INDEXER_WRITE_TURN_MS,
    scanThread,
    cpu,
    onScanThreadFailure: (reason) => logger?.warn({ reason }, 'dense scan thread stopped; scans run on the main thread'),
    // A graph built rather than loaded at start is worth knowing about: it takes minutes at a million chunks.
    onGraph: (event) => logger?.info(event, event.outcome === 'loaded' ? 'HNSW graph loaded' : 'HNSW graph built'),
  });
}
