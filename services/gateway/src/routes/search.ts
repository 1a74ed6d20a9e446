import type { FastifyInstance } from 'fastify';
import {
  ErrorResponse,
  SearchBody,
  SearchResponse,
  Subjects,
  parseSearchBody,
  type IndexSearchReply,
  type IndexSearchRequest,
  type SearchInput,
  type SearchResultItem,
  type TitleSearchRequest,
} from '@memex/contracts';
import { query } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';

export function searchRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post(
    '/api/v1/search',
    {
      schema: {
        summary: 'Search memos',
        description:
          '`chunk_vector_search` ranks chunks by hybrid (dense + lexical) relevance; `distance` = 1 − relevance, ' +
          'lower is closer. `title_contains` / `title_startswith` match titles case-insensitively and return one ' +
          'item per memo, ordered by title, with its first chunk and `distance: null`. Filters apply before ranking.',
        tags: ['search'],
        body: SearchBody,
        response: { 200: SearchResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.body));
      const input = parseSearchBody(request.body);
      const options = { requestId: ctx.requestId, timeoutMs: deps.config.MEMEX_QUERY_TIMEOUT_MS };
      if (input.searchMethod === 'chunk_vector_search') {
        const reply = await query<IndexSearchRequest, IndexSearchReply>(
          deps.nc,
          Subjects.query.indexSearch,
          searchRequest(ctx.projectId, input),
          options,
        );
        const results: SearchResultItem[] = reply.hits.map((hit) => ({
          memo_title: hit.memoTitle,
          memo_uuid: hit.memoId,
          chunk_uuid: hit.chunkId,
          chunk_content: hit.content,
          memo_summary: hit.memoSummary,
          distance: hit.distance,
        }));
        return { results };
      }
      const results = await query<TitleSearchRequest, SearchResultItem[]>(
        deps.nc,
        Subjects.query.memoTitleSearch,
        {
          projectId: ctx.projectId,
          mode: input.searchMethod === 'title_contains' ? 'contains' : 'startswith',
          query: input.query,
          filters: input.filters,
          limit: input.limit,
        },
        options,
      );
      return { results };
    },
  );
}

/**
 * `rag_config` on search: `vector_search.top_k` candidates are fused (and reranked, when reranking
 * is on: `reranking.enabled`, default whether the indexer has a reranker); `limit` hits come back,
 * at most `reranking.top_k`; `similarity_threshold` drops candidates below it first.
 */
function searchRequest(projectId: string, input: SearchInput): IndexSearchRequest {
  const rag = input.rag;
  const keep = Math.min(input.limit, rag?.rerankTopK ?? input.limit);
  return {
    projectId,
    query: input.query,
    filters: input.filters,
    limit: keep,
    ...(rag?.vectorTopK !== undefined ? { candidates: Math.max(rag.vectorTopK, keep) } : {}),
    ...(rag?.similarityThreshold !== undefined ? { maxDistance: 1 - rag.similarityThreshold } : {}),
    ...(rag?.rerank !== undefined || rag?.rerankTopK !== undefined ? { rerank: { ...(rag.rerank !== undefined ? { enabled: rag.rerank } : {}), topK: keep } } : {}),
  };
}
