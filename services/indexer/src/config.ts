import { Type, type Static } from '@sinclair/typebox';
import { ConfigError, loadEnv, ServiceEnv } from '@memex/runtime';
import { DEFAULT_CHUNK_OPTIONS } from '@memex/text';
import { WRITE_TURN_MS } from './searchIndex/embedded/writeTurn';

export const IndexerEnv = Type.Object({
  ...ServiceEnv.properties,
  EMBEDDING_MODEL: Type.String({
    default: 'memex-glove-100d',
    description: 'transformers.js feature-extraction model: a Hugging Face id or a directory (absolute, or under MEMEX_MODELS_DIR)',
  }),
  EMBEDDING_URL: Type.Optional(
    Type.String({
      description: 'For EMBEDDING_MODEL=openai:<model> the API base (http://host:8000/v1); for ollama:<model> the Ollama server (http://host:11434)',
    }),
  ),
  EMBEDDING_API_KEY: Type.Optional(Type.String({ description: 'Bearer key for the embedding server, if it needs one' })),
  EMBEDDING_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 60_000, description: 'Longest one remote embedding request may take' }),
  RERANKER: Type.Union([Type.Literal('none'), Type.Literal('local'), Type.Literal('tei'), Type.Literal('cohere')], {
    default: 'none',
    description:
      'none; local: a transformers.js cross-encoder from RERANKER_MODEL; tei: POST {RERANKER_URL}/rerank {query, texts}; cohere: POST {RERANKER_URL}/rerank {model, query, documents} (Cohere, Jina, vLLM; give the URL with /v1)',
  }),
  RERANKER_MODEL: Type.Optional(Type.String({ description: 'local: a model directory (absolute, or under MEMEX_MODELS_DIR); remote: the model name sent' })),
  RERANKER_URL: Type.Optional(Type.String({ description: 'Base URL of the rerank server' })),
  RERANKER_API_KEY: Type.Optional(Type.String()),
  RERANKER_CANDIDATES: Type.Integer({ minimum: 1, maximum: 200, default: 30, description: 'Fused candidates reranked when a request names no vector_search.top_k' }),
  RERANKER_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  MEMEX_MODELS_DIR: Type.String({ default: './models', description: 'Where local models live' }),
  MEMEX_ALLOW_REMOTE_MODELS: Type.Boolean({ default: false, description: 'Let transformers.js download models from the Hub' }),
  EMBEDDING_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 1024, default: 64 }),
  EMBEDDING_QUERY_PREFIX: Type.String({ default: '', description: "Text put before queries (e.g. bge's instruction)" }),
  EMBEDDING_DOCUMENT_PREFIX: Type.String({ default: '', description: 'Text put before chunks' }),
  QDRANT_URL: Type.Optional(Type.String({ description: 'Set to keep the index in Qdrant' })),
  QDRANT_API_KEY: Type.Optional(Type.String()),
  QDRANT_COLLECTION_PREFIX: Type.String({ default: 'memex' }),
  QDRANT_BM25_AVG_DOC_LENGTH: Type.Number({
    exclusiveMinimum: 0,
    default: 100,
    description: 'Average chunk length in terms that Qdrant-stored BM25 weights assume (the embedded index uses the live average)',
  }),
  CHUNK_TARGET_CHARS: Type.Integer({ minimum: 100, default: DEFAULT_CHUNK_OPTIONS.targetChars }),
  CHUNK_MAX_CHARS: Type.Integer({ minimum: 100, default: DEFAULT_CHUNK_OPTIONS.maxChars }),
  CHUNK_OVERLAP_CHARS: Type.Integer({ minimum: 0, default: DEFAULT_CHUNK_OPTIONS.overlapChars }),
  SEARCH_LEXICAL_WEIGHT: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0.85,
    description: 'Weight of the BM25 ranking in the fused score (the dense ranking gets the rest)',
  }),
  SEARCH_TITLE_WEIGHT: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0,
    description: 'Lift of a chunk whose memo title holds the query terms, in the fused ranking (0 = off)',
  }),
  SEARCH_CANDIDATES: Type.Integer({ minimum: 1, maximum: 10_000, default: 100, description: 'Candidates per ranking before fusion' }),
  INDEXER_VECTOR_CACHE_MB: Type.Number({
    minimum: 0,
    default: 16,
    description:
      'Embedded index: MiB of full-precision vectors kept in memory per model once read for rescoring (as stored: half floats, 2 bytes a component), about the least recently used dropped first (0: read each from disk)',
  }),
  INDEXER_SCAN_THREAD: Type.Union([Type.Literal('auto'), Type.Literal('true'), Type.Literal('false')], {
    default: 'auto',
    description:
      'Embedded index: exact dense scans of a model with 32,768 chunks or more run on a second thread while BM25 runs on the main one (the thread reads the int8 vectors where the indexer keeps them, shared, not copied); auto: always with more than 2 cores, and with 2 or fewer only while they have CPU to spare (idle time read from /proc/stat twice a second, the thread\'s own CPU counted as spare); the cores are those the process may run on, capped by its cgroup\'s CPU quota',
  }),
  INDEXER_ROLE: Type.Union([Type.Literal('all'), Type.Literal('search'), Type.Literal('ingest')], {
    default: 'all',
    description:
      'all: index memos and answer searches; search: answer searches only (replicas that follow the index other instances write: the shared SQLite file, or Qdrant); ingest: index only, answer no search',
  }),
  INDEXER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 2, description: 'Batches of memos embedded at once' }),
  INDEXER_BATCH_SIZE: Type.Integer({
    minimum: 1,
    maximum: 256,
    default: 32,
    description: 'Most memo events the indexer takes at once (one embedder call for all of them; the embedded index writes them INDEXER_WRITE_TURN_MS at a time, answering searches between)',
  }),
  INDEXER_WRITE_TURN_MS: Type.Number({
    minimum: 0,
    maximum: 1000,
    default: WRITE_TURN_MS,
    description:
      'Embedded index: milliseconds one write transaction, with the reloading of what it wrote, may hold the indexer before searches get a turn (larger: faster ingestion, longer waits for searches beside it; 0: a row per transaction)',
  }),
});
export type IndexerConfig = Static<typeof IndexerEnv>;

export function loadIndexerConfig(env: Record<string, string | undefined>): IndexerConfig {
  const config = loadEnv(IndexerEnv, env);
  if (config.CHUNK_MAX_CHARS < config.CHUNK_TARGET_CHARS) {
    throw new ConfigError('Invalid configuration: CHUNK_MAX_CHARS must be at least CHUNK_TARGET_CHARS');
  }
  if (config.CHUNK_OVERLAP_CHARS >= config.CHUNK_TARGET_CHARS) {
    throw new ConfigError('Invalid configuration: CHUNK_OVERLAP_CHARS must be less than CHUNK_TARGET_CHARS');
  }
  if (config.EMBEDDING_MODEL.match(/^(openai|ollama):/) && !config.EMBEDDING_URL)
    throw new ConfigError(`Invalid configuration: EMBEDDING_URL is missing: EMBEDDING_MODEL=${config.EMBEDDING_MODEL} needs it`);
  if (config.RERANKER === 'local' && !config.RERANKER_MODEL) throw new ConfigError('Invalid configuration: RERANKER_MODEL is missing: RERANKER=local needs a model directory');
  if ((config.RERANKER === 'tei' || config.RERANKER === 'cohere') && !config.RERANKER_URL)
    throw new ConfigError(`Invalid configuration: RERANKER_URL is missing: RERANKER=${config.RERANKER} needs it`);
  return config;
}
