/**
 * The memo catalog: the paged memo list (Skald's shape), processing status and history.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  ErrorResponse,
  MemoHistoryEntry,
  MemoHistoryResponse,
  MemoIdParams,
  MemoIdQuery,
  MemoListItem,
  MemoListQuery,
  MemoListResponse,
  MemoStatusResponse,
  Subjects,
  parseMemoListQuery,
  type MemoAddressRequest,
  type MemoListReply,
  type MemoListRequest,
} from '@memex/contracts';
import { query } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { memoRef } from '../http/memoRef';
import { pageLinks } from '../http/pageLinks';
import { noteMemoIds } from '../auth/scopes';

const LIST_PATH = '/api/v1/memo';
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse };

/** A strong ETag of a JSON answer, so pollers get 304 while nothing changes. */
function etagOf(body: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
}

/** A reference to a schema added with `addSchema`: OpenAPI lists it under components.schemas by name. */
const named = (schema: { $id?: string }) => ({ $ref: `${schema.$id}#` });

export function memoCatalogRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const { config } = deps;
  // Items first: the responses refer to them.
  app.addSchema(MemoListItem);
  app.addSchema({ ...MemoListResponse, properties: { ...MemoListResponse.properties, results: { type: 'array', items: named(MemoListItem) } } });
  app.addSchema(MemoStatusResponse);
  app.addSchema(MemoHistoryEntry);
  app.addSchema({ ...MemoHistoryResponse, properties: { ...MemoHistoryResponse.properties, revisions: { type: 'array', items: named(MemoHistoryEntry) } } });
  const queryOptions = (requestId: string) => ({ requestId, timeoutMs: config.MEMEX_QUERY_TIMEOUT_MS });

  app.get(
    LIST_PATH,
    {
      config: { access: { scope: 'memos:read', action: 'memo.list' } },
      schema: {
        operationId: 'listMemos',
        summary: 'List memos',
        description:
          "The project's memos, newest first (created_at, then uuid), in pages: `page` from 1, `page_size` 1-100 " +
          '(default 20). `filters` takes the search filters as a URL-encoded JSON array, so a console can browse by ' +
          'source, tag or metadata; `count` and `total_pages` count the memos that pass them. Archived memos are ' +
          'listed too. A memo created while a client pages shifts later pages by one. `next` and `previous` are the ' +
          'neighbouring pages as absolute paths with the same query (null at the ends), so a client can follow them.',
        tags: ['memos'],
        querystring: MemoListQuery,
        response: { 200: named(MemoListResponse), ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const input = parseMemoListQuery(request.query as Record<string, unknown>);
      const list = await query<MemoListRequest, MemoListReply>(
        deps.nc,
        Subjects.query.memoList,
        { projectId: ctx.projectId, ...input, filters: [...ctx.space, ...input.filters] },
        queryOptions(ctx.requestId),
      );
      noteMemoIds(request, list.results.map((m) => m.uuid));
      const body: MemoListResponse = { ...list, ...pageLinks(LIST_PATH, request.url, list.page, list.total_pages) };
      return body;
    },
  );

  app.get(
    '/api/v1/memo/:memo_id/status',
    {
      config: { access: { scope: 'memos:read', action: 'memo.status' } },
      schema: {
        operationId: 'getMemoStatus',
        summary: "A memo's processing status",
        description:
          '`processing` until the current content is extracted (uploads), chunked, summarized and tagged; then ' +
          '`processed`; `error` (with `error_reason`) when a stage failed for good. Answers carry an ETag and ' +
          '`Cache-Control: private, max-age=1`: poll with `If-None-Match` and get 304 while nothing changes.',
        tags: ['memos'],
        params: MemoIdParams,
        querystring: MemoIdQuery,
        response: { 200: named(MemoStatusResponse), 304: { type: 'null', description: 'Unchanged since the ETag given' }, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const ref = memoRef(request.params, request.query);
      const status = await query<MemoAddressRequest, MemoStatusResponse>(deps.nc, Subjects.query.memoStatus, { projectId: ctx.projectId, ref, ...(ctx.space.length ? { space: ctx.space } : {}) }, queryOptions(ctx.requestId));
      noteMemoIds(request, [status.memo_uuid]);
      const etag = etagOf(status);
      reply.header('etag', etag).header('cache-control', 'private, max-age=1');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return status;
    },
  );

  app.get(
    '/api/v1/memo/:memo_id/history',
    {
      config: { access: { scope: 'memos:read', action: 'memo.history' } },
      schema: {
        operationId: 'getMemoHistory',
        summary: "A memo's history",
        description:
          'Every change to the memo, oldest first, from its event log: which event, when, who caused it (the ' +
          'client or a processing stage, with the request id), which fields it set, and for content only the ' +
          'revision and its length, never the text. A deleted memo has no history (404): erasure removes it.',
        tags: ['memos'],
        params: MemoIdParams,
        querystring: MemoIdQuery,
        response: { 200: named(MemoHistoryResponse), ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const ref = memoRef(request.params, request.query);
      const history = await query<MemoAddressRequest, MemoHistoryResponse>(deps.nc, Subjects.query.memoHistory, { projectId: ctx.projectId, ref, ...(ctx.space.length ? { space: ctx.space } : {}) }, queryOptions(ctx.requestId));
      noteMemoIds(request, [history.memo_uuid]);
      return history;
    },
  );
}
