import type { FastifyInstance } from 'fastify';
import {
  ErrorResponse,
  SearchBody,
  SearchResponse,
  Subjects,
  indexRequestFromRag,
  parseSearchBody,
  type IndexSearchRequest,
  type SearchInput,
  type TitleSearchRequest,
} from '@memex/contracts';
import { queryJson } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { noteMemoIds, noteQuery } from '../auth/scopes';

/** The memo uuids of a search response's bytes, for the audit trail, without decoding it. */
function memoUuidsIn(body: Buffer): string[] {
  return [...new Set(Array.from(body.toString('latin1').matchAll(/"memo_uuid":"([0-9a-f-]{36})"/g), (m) => m[1]!))];
}

/** How a search response begins; the title search's results are sent inside it. */
const RESULTS_PREFIX = Buffer.from('{"results":');
const CLOSING_BRACE = Buffer.from('}');
const JSON_TYPE = 'application/json; charset=utf-8';

export function searchRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post(
    '/api/v1/search',
    {
      config: { access: { scope: 'search', action: 'search' } },
      schema: {
        operationId: 'search',
        summary: 'Search memos',
        description:
          '`chunk_vector_search` ranks chunks by hybrid (dense + lexical) relevance; `distance` = 1 − relevance, ' +
          'lower is closer. `title_contains` / `title_startswith` match titles case-insensitively and return one ' +
          'item per memo, ordered by title, with its first chunk and `distance: null`. Filters apply before ranking. ' +
          '`rag_config` (chunk_vector_search): `vector_search.top_k` fused candidates, `vector_search.similarity_threshold` ' +
          'drops those below it, `reranking.enabled` (default: whether a reranker is configured) re-orders them with the ' +
          "reranker (then `distance` = 1 − the reranker's relevance), at most `reranking.top_k` and `limit` come back.",
        tags: ['search'],
        body: SearchBody,
        response: { 200: SearchResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.body));
      const parsed = parseSearchBody(request.body);
      // The caller's space, ANDed into the filters every backend applies before ranking.
      const input = ctx.space.length ? { ...parsed, filters: [...ctx.space, ...parsed.filters] } : parsed;
      noteQuery(request, input.query);
      const options = { requestId: ctx.requestId, timeoutMs: deps.config.MEMEX_QUERY_TIMEOUT_MS };
      if (input.searchMethod === 'chunk_vector_search') {
        // The indexer answers with the response itself, sent on as it came: the gateway never
        // decodes the chunk texts and summaries it carries.
        const indexQuery: IndexSearchRequest = { ...searchRequest(ctx.projectId, input), format: 'search-response' };
        const body = await queryJson(deps.nc, Subjects.query.indexSearch, indexQuery, options);
        noteMemoIds(request, memoUuidsIn(body));
        return reply.type(JSON_TYPE).send(body);
      }
      const titleQuery: TitleSearchRequest = {
        projectId: ctx.projectId,
        mode: input.searchMethod === 'title_contains' ? 'contains' : 'startswith',
        query: input.query,
        filters: input.filters,
        limit: input.limit,
      };
      // The memo service's results (a TitleSearchReply), sent on undecoded inside the response.
      const results = await queryJson(deps.nc, Subjects.query.memoTitleSearch, titleQuery, options);
      noteMemoIds(request, memoUuidsIn(results));
      return reply.type(JSON_TYPE).send(Buffer.concat([RESULTS_PREFIX, results, CLOSING_BRACE]));
    },
  );
}

/** The index query of a `chunk_vector_search`: the caller's project, the body's query and rag_config. */
function searchRequest(projectId: string, input: SearchInput): IndexSearchRequest {
  return { projectId, query: input.query, filters: input.filters, ...indexRequestFromRag(input.rag, { limit: input.limit }) };
}
