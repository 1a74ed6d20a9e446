/**
 * `rag_config`: per-request retrieval controls on chat and generate (and the ones that apply, on
 * search), in Skald's snake_case shape, also spelled as Skald's Node SDK types it (camelCase). The
 * schema is for OpenAPI and types; `parseRagConfig` decides which single 400 a bad value gets,
 * naming the field.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MemexError } from '../errors';
import { Uuid } from './common';

export const VECTOR_TOP_K_MAX = 200;
export const RERANK_TOP_K_MAX = 100;
export const LLM_PROVIDERS = ['extractive', 'ollama', 'openai'] as const;
export type LlmProviderName = (typeof LLM_PROVIDERS)[number];

const alias = (of: string) => `The same as ${of} (the Skald Node SDK's camelCase spelling)`;

const TopK = (max: number, description: string) => Type.Integer({ minimum: 1, maximum: max, description });
const Threshold = Type.Number({ minimum: 0, maximum: 1, description: 'Drop candidates whose similarity (1 − distance) is below this' });
const Enabled = (description: string) => Type.Object({ enabled: Type.Optional(Type.Boolean({ default: false, description })) }, { additionalProperties: false });
const VectorSearch = Type.Object(
  {
    top_k: Type.Optional(TopK(VECTOR_TOP_K_MAX, 'Candidates retrieved (fused dense + lexical)')),
    similarity_threshold: Type.Optional(Threshold),
    topK: Type.Optional(TopK(VECTOR_TOP_K_MAX, alias('top_k'))),
    similarityThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: alias('similarity_threshold') })),
  },
  { additionalProperties: false },
);

export const RagConfig = Type.Object(
  {
    llm_provider: Type.Optional(
      Type.String({ description: `The provider to answer with: ${LLM_PROVIDERS.join(', ')}; must be the one this server is configured with` }),
    ),
    query_rewrite: Type.Optional(Enabled('Rewrite a follow-up into a standalone search query first')),
    vector_search: Type.Optional(VectorSearch),
    reranking: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Default: true when the server has a reranker configured' })),
          top_k: Type.Optional(TopK(RERANK_TOP_K_MAX, 'Candidates kept after reranking; ≤ vector_search.top_k')),
          topK: Type.Optional(TopK(RERANK_TOP_K_MAX, alias('top_k'))),
        },
        { additionalProperties: false },
      ),
    ),
    references: Type.Optional(Enabled('Return the memos the answer drew on as `references`, keyed by their [n] marker')),
    llmProvider: Type.Optional(Type.String({ description: alias('llm_provider') })),
    queryRewrite: Type.Optional(Enabled(alias('query_rewrite.enabled'))),
    vectorSearch: Type.Optional(VectorSearch),
  },
  {
    $id: 'RagConfig',
    additionalProperties: false,
    description:
      "Skald's snake_case fields; the camelCase spelling of Skald's Node SDK (llmProvider, queryRewrite, vectorSearch.topK, " +
      'vectorSearch.similarityThreshold, reranking.topK) is taken too. Giving both spellings of one setting is 400.',
  },
);
export type RagConfig = Static<typeof RagConfig>;

/** What search takes of `rag_config`: the retrieval knobs. */
export const SearchRagConfig = Type.Pick(RagConfig, ['vector_search', 'vectorSearch', 'reranking'], { $id: 'SearchRagConfig', additionalProperties: false });
export type SearchRagConfig = Static<typeof SearchRagConfig>;

export const Reference = Type.Object(
  { memo_uuid: Uuid, memo_title: Type.String(), chunk_uuid: Uuid },
  { $id: 'Reference' },
);
export type Reference = Static<typeof Reference>;

/**
 * Skald's `references`: the passages the model was given, keyed by the number n of their [n] marker
 * in the text, so a client resolves a marker with `references[n]`.
 */
export const References = Type.Record(Type.String({ pattern: '^[1-9][0-9]*$' }), Reference, {
  $id: 'References',
  description: 'With rag_config.references.enabled: each passage the model was given, keyed by the n of its [n] marker in the text',
});
export type References = Static<typeof References>;

/** A validated `rag_config`, in our vocabulary; absent fields take the server's defaults. */
export interface RagOptions {
  llmProvider?: LlmProviderName;
  queryRewrite?: boolean;
  vectorTopK?: number;
  similarityThreshold?: number;
  rerank?: boolean;
  rerankTopK?: number;
  references?: boolean;
}

function invalid(detail: string): MemexError {
  return new MemexError('InvalidRequest', detail);
}

/** The Node SDK's camelCase spellings and the snake_case field each stands for. */
const CAMEL_CASE: Readonly<Record<string, string>> = {
  llmProvider: 'llm_provider',
  queryRewrite: 'query_rewrite',
  vectorSearch: 'vector_search',
  topK: 'top_k',
  similarityThreshold: 'similarity_threshold',
};
const SPELLED_CAMEL = Object.fromEntries(Object.entries(CAMEL_CASE).map(([camel, snake]) => [snake, camel]));

/** An object's fields under their snake_case names; an unknown field or one given in both spellings is 400. */
function section(value: unknown, field: string, allowed: readonly string[]): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${field} must be an object`);
  const fields: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = Object.hasOwn(CAMEL_CASE, key) ? CAMEL_CASE[key]! : key;
    if (!allowed.includes(name)) throw invalid(`Unknown field: '${field}.${key}'`);
    if (Object.hasOwn(fields, name)) throw invalid(`${field}.${name} and ${field}.${SPELLED_CAMEL[name]} are the same setting: give one`);
    fields[name] = v;
  }
  return fields;
}

function flag(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${field} must be a boolean`);
  return value;
}

function integer(value: unknown, field: string, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) throw invalid(`${field} must be an integer from 1 to ${max}`);
  return value;
}

/**
 * Validates `rag_config`. `where` names the endpoint: search accepts only the retrieval knobs
 * (`vector_search`, `reranking`); chat and generate accept all. camelCase spellings (`vectorSearch.topK`)
 * are read as their snake_case fields, and errors about a value name the snake_case field.
 */
export function parseRagConfig(value: unknown, where: 'chat' | 'generate' | 'search'): RagOptions | undefined {
  const fields = where === 'search' ? ['vector_search', 'reranking'] : ['llm_provider', 'query_rewrite', 'vector_search', 'reranking', 'references'];
  const root = section(value, 'rag_config', fields);
  if (!root) return undefined;
  const options: RagOptions = {};

  if (root.llm_provider !== undefined && root.llm_provider !== null) {
    if (typeof root.llm_provider !== 'string' || !(LLM_PROVIDERS as readonly string[]).includes(root.llm_provider))
      throw invalid(`rag_config.llm_provider must be one of ${LLM_PROVIDERS.join(', ')}`);
    options.llmProvider = root.llm_provider as LlmProviderName;
  }
  const rewrite = flag(section(root.query_rewrite, 'rag_config.query_rewrite', ['enabled'])?.enabled, 'rag_config.query_rewrite.enabled');
  if (rewrite !== undefined) options.queryRewrite = rewrite;

  const vector = section(root.vector_search, 'rag_config.vector_search', ['top_k', 'similarity_threshold']);
  const vectorTopK = integer(vector?.top_k, 'rag_config.vector_search.top_k', VECTOR_TOP_K_MAX);
  if (vectorTopK !== undefined) options.vectorTopK = vectorTopK;
  const threshold = vector?.similarity_threshold;
  if (threshold !== undefined && threshold !== null) {
    if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0 || threshold > 1)
      throw invalid('rag_config.vector_search.similarity_threshold must be a number from 0 to 1');
    options.similarityThreshold = threshold;
  }

  const rerank = section(root.reranking, 'rag_config.reranking', ['enabled', 'top_k']);
  const rerankEnabled = flag(rerank?.enabled, 'rag_config.reranking.enabled');
  if (rerankEnabled !== undefined) options.rerank = rerankEnabled;
  const rerankTopK = integer(rerank?.top_k, 'rag_config.reranking.top_k', RERANK_TOP_K_MAX);
  if (rerankTopK !== undefined) {
    if (vectorTopK !== undefined && rerankTopK > vectorTopK)
      throw invalid('rag_config.reranking.top_k must be less than or equal to rag_config.vector_search.top_k');
    options.rerankTopK = rerankTopK;
  }

  const references = flag(section(root.references, 'rag_config.references', ['enabled'])?.enabled, 'rag_config.references.enabled');
  if (references !== undefined) options.references = references;
  return options;
}

/** The retrieval knobs of an index search request (`IndexSearchRequest` holds them beside the query). */
export interface IndexRetrieval {
  limit: number;
  candidates?: number;
  maxDistance?: number;
  rerank: { enabled?: boolean; topK: number };
}

/**
 * The one rag_config → index request mapping, for search and for chat and generate.
 * `vector_search.top_k` fused candidates are asked for (at least the hits kept);
 * `similarity_threshold` drops those below it first; reranking (`enabled` given, else on whenever
 * the indexer has a reranker) keeps `reranking.top_k` of them.
 * - `{ limit }` (search): at most `limit` hits come back, and at most `reranking.top_k`.
 * - `{ topK }` (chat, generate): `reranking.top_k` defaults to `topK`, capped by the candidates;
 *   without reranking every candidate comes back (`vector_search.top_k`, default `topK`).
 */
export function indexRequestFromRag(rag: RagOptions | undefined, hits: { limit: number } | { topK: number }): IndexRetrieval {
  const candidates = rag?.vectorTopK;
  const keep =
    'limit' in hits ? Math.min(hits.limit, rag?.rerankTopK ?? hits.limit) : Math.min(rag?.rerankTopK ?? hits.topK, candidates ?? Infinity);
  return {
    limit: 'limit' in hits ? keep : (candidates ?? hits.topK),
    ...(candidates !== undefined ? { candidates: Math.max(candidates, keep) } : {}),
    ...(rag?.similarityThreshold !== undefined ? { maxDistance: 1 - rag.similarityThreshold } : {}),
    rerank: { ...(rag?.rerank !== undefined ? { enabled: rag.rerank } : {}), topK: keep },
  };
}
