import type { FastifyInstance } from 'fastify';
import {
  CreateMemoBody,
  CreateMemoResponse,
  CreateMemosBody,
  CreateMemosResponse,
  MAX_BATCH_MEMOS,
  parseCreateMemosBody,
  type CreateMemosItem,
  ErrorResponse,
  MemexError,
  Memo,
  MemoIdParams,
  MemoIdQuery,
  OkResponse,
  Subjects,
  UpdateMemoBody,
  parseUpdateMemoBody,
  type MemoGetRequest,
  type MemoRef,
  type ContentRef,
  type MemoResolveReply,
  type MemoView,
  type StoredUpdateInput,
} from '@memex/contracts';
import { IdempotencyStore, SEAL_FOR_TRANSIT, natsConnected, payloadBudget, query, requestHash, uuidV7 } from '@memex/runtime';
import { awaitSearchConsistency, requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { WriteBudget } from '../http/writeBudget';
import { idempotentMemoId, idempotentMemoIds } from '../http/idempotencyKey';
import { errorAnswer } from '../http/errors';
import { CreateCoalescer } from '../http/createCoalescer';
import { memoRef } from '../http/memoRef';
import { uploadMemo } from './memoUpload';
import { createMemoInput, createMemos, type NewMemo } from './memoCreate';
import { memoBody } from './memoBody';
import { noteMemoIds } from '../auth/scopes';
import { assertStaysInSpace } from '../auth/space';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse };

export function memoRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const { commands, config, content } = deps;
  const { keyring } = content;
  const commandOptions = (requestId: string) => ({ requestId, timeoutMs: config.MEMEX_COMMAND_TIMEOUT_MS });
  const limits = { maxContentBytes: config.MEMEX_MAX_CONTENT_BYTES };
  const queryOptions = (requestId: string) => ({ requestId, timeoutMs: config.MEMEX_QUERY_TIMEOUT_MS });
  const coalescer =
    config.MEMEX_CREATE_COALESCE > 0
      ? new CreateCoalescer(commands, { maxInFlight: config.MEMEX_CREATE_COALESCE, maxItems: MAX_BATCH_MEMOS, maxBytes: () => payloadBudget(deps.nc) - 8 * 1024 })
      : undefined;
  let idempotency: Promise<IdempotencyStore> | undefined;
  const idempotencyStore = () => {
    idempotency ??= IdempotencyStore.open(deps.nc, { replicas: config.MEMEX_NATS_REPLICAS, ttlMs: config.MEMEX_IDEMPOTENCY_TTL_MS }).catch((error: unknown) => {
      idempotency = undefined;
      throw error;
    });
    return idempotency;
  };

  /** The memo a route addresses, which must belong to the caller's project. */
  const resolveOwn = async (projectId: string, ref: MemoRef, requestId: string, space: MemoGetRequest['space'] = []): Promise<string> => {
    const { memoId, ownerProjectId } = await query<MemoGetRequest, MemoResolveReply>(
      deps.nc,
      Subjects.query.memoResolve,
      { projectId, ref, ...(space.length ? { space } : {}) },
      queryOptions(requestId),
    );
    if (ownerProjectId !== projectId) throw new MemexError('ResourceNotInProject');
    return memoId;
  };

  /** Runs a command that references a freshly written blob; the blob goes again if the command fails. */
  const withBlob = async <T>(ref: ContentRef | undefined, send: () => Promise<T>): Promise<T> => {
    try {
      return await send();
    } catch (error) {
      if (ref) await content.remove(ref).catch(() => undefined);
      throw error;
    }
  };

  app.post(
    '/api/v1/memo',
    {
      config: { access: { scope: 'memos:write', action: 'memo.create' } },
      schema: {
        operationId: 'createMemo',
        summary: 'Create a memo',
        description:
          'Stores the memo and starts its processing (summary, tags, chunks, embeddings). Answers once the memo is ' +
          'readable (pending). With an `Idempotency-Key` header, retrying the same request creates the memo once. ' +
          'Documents: send `multipart/form-data` with a `file` part (PDF, DOCX, PPTX, XLSX, ODT, DOC, HTML, Markdown, ' +
          'text; up to MEMEX_UPLOAD_LIMIT, 100 MB by default) and the same fields as form strings (`metadata` and ' +
          '`tags` as JSON text); the text is extracted in the background (see the memo status).',
        tags: ['memos'],
        body: CreateMemoBody,
        response: { 200: CreateMemoResponse, 409: ErrorResponse, 413: ErrorResponse, 422: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      if (request.isMultipart()) return uploadMemo(deps, request, reply);
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const input = createMemoInput(deps, ctx.space, request.body);
      const commandId = idempotentMemoId(ctx.projectId, request.headers['idempotency-key']);
      const memoId = commandId ?? uuidV7();
      if (commandId) {
        // The same key with another body is a client bug, not a retry: refuse it rather than replay.
        const store = await idempotencyStore();
        if (!(await store.claim(memoId, requestHash({ query: request.query, body: request.body })))) throw new MemexError('IdempotencyKeyReused');
      }
      const [created] = await createMemos(deps, ctx, [{ memoId, input, ...(commandId ? { commandId } : {}) }], coalescer);
      if (!created!.ok) throw created!.error;
      noteMemoIds(request, [memoId]);
      reply.header('Location', `/api/v1/memo/${memoId}`);
      return { ok: true as const, memo_uuid: memoId };
    },
  );

  app.post(
    '/api/v1/memo/batch',
    {
      bodyLimit: config.MEMEX_BATCH_BODY_LIMIT,
      config: { access: { scope: 'memos:write', action: 'memo.create' } },
      schema: {
        operationId: 'createMemos',
        summary: 'Create many memos',
        description:
          '`{ "memos": [ ... ] }`, 1 to 1000 POST /api/v1/memo bodies. Each memo is validated, created or refused ' +
          'as its own POST would be; `results` answers each in request order, with the status and error text that ' +
          'POST would have given. A reference_id named twice goes to its first memo (the others 409). Each memo ' +
          'costs one unit of the rate limit; the body may be up to MEMEX_BATCH_BODY_LIMIT (64 MiB by default). ' +
          'With an `Idempotency-Key` header, retrying the same batch creates each memo once, with the same ids.',
        tags: ['memos'],
        body: CreateMemosBody,
        response: { 200: CreateMemosResponse, 413: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      const memos = (request.body as { memos?: unknown } | undefined)?.memos;
      // Each memo is a unit of the rate limit, counted before anything is parsed or written.
      const cost = Array.isArray(memos) ? Math.min(Math.max(memos.length, 1), MAX_BATCH_MEMOS) : 1;
      const ctx = requestContext(deps, request, reply, requestedProject(request.query), cost);
      const bodies = parseCreateMemosBody(request.body);
      const idempotent = idempotentMemoIds(ctx.projectId, request.headers['idempotency-key'], bodies.length);
      if (idempotent) {
        const store = await idempotencyStore();
        if (!(await store.claim(idempotent.claim, requestHash({ query: request.query, body: request.body })))) throw new MemexError('IdempotencyKeyReused');
      }
      const results: CreateMemosItem[] = [];
      const accepted: { at: number; memo: NewMemo }[] = [];
      bodies.forEach((body, at) => {
        try {
          const memoId = idempotent?.memoIds[at] ?? uuidV7();
          accepted.push({ at, memo: { memoId, input: createMemoInput(deps, ctx.space, body), ...(idempotent ? { commandId: memoId } : {}) } });
        } catch (error) {
          results[at] = refusal(error);
        }
      });
      const created = accepted.length > 0 ? await createMemos(deps, ctx, accepted.map((a) => a.memo)) : [];
      created.forEach((outcome, k) => {
        results[accepted[k]!.at] = outcome.ok ? { ok: true, memo_uuid: outcome.memoId } : refusal(outcome.error);
      });
      noteMemoIds(request, created.flatMap((c) => (c.ok ? [c.memoId] : [])));
      return { ok: true as const, results };
    },
  );

  /** A refused memo of a batch: what its own POST would have answered. */
  const refusal = (error: unknown): CreateMemosItem => {
    const answer = errorAnswer(error, !natsConnected(deps.nc));
    if (answer.logged !== 'no') deps.logger.error({ err: error }, 'a memo of a batch failed');
    return { ok: false, status: answer.status, error: answer.error };
  };

  app.get(
    '/api/v1/memo/:memo_id',
    {
      config: { access: { scope: 'memos:read', action: 'memo.read' } },
      schema: {
        operationId: 'getMemo',
        summary: 'Read a memo',
        description: 'By memo UUID, or by the client reference id with `id_type=reference_id`.',
        tags: ['memos'],
        params: MemoIdParams,
        querystring: MemoIdQuery,
        response: { 200: Memo, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const ref = memoRef(request.params, request.query);
      const view = await query<MemoGetRequest, MemoView>(deps.nc, Subjects.query.memoGet, { projectId: ctx.projectId, ref, ...(ctx.space.length ? { space: ctx.space } : {}) }, queryOptions(ctx.requestId));
      noteMemoIds(request, [view.uuid]);
      const text = await content.read(ctx.projectId, view.uuid, view.content_ref).catch((error: unknown) => {
        // Erased between the read model and now.
        if ((error as Error).name === 'KeyErasedError') return undefined;
        throw error;
      });
      if (text === undefined) throw new MemexError('MemoNotFound');
      return reply.type('application/json; charset=utf-8').send(memoBody(view, text));
    },
  );

  app.patch(
    '/api/v1/memo/:memo_id',
    {
      config: { access: { scope: 'memos:write', action: 'memo.update' } },
      schema: {
        operationId: 'updateMemo',
        summary: 'Update a memo',
        description:
          'Every field is optional. `content` starts a new revision: summary, tags and chunks are dropped and ' +
          'regenerated. Without `content` they are kept. `metadata` replaces the whole object; `null` clears ' +
          'source, client_reference_id and expiration_date. Search reflects the change when this answers.',
        tags: ['memos'],
        params: MemoIdParams,
        querystring: MemoIdQuery,
        body: UpdateMemoBody,
        response: { 200: OkResponse, 409: ErrorResponse, 413: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const ref = memoRef(request.params, request.query);
      const input = parseUpdateMemoBody(request.body, limits);
      const { projectId } = ctx;
      const memoId = await resolveOwn(projectId, ref, ctx.requestId, ctx.space);
      if (ctx.space.length) {
        const view = await query<MemoGetRequest, MemoView>(deps.nc, Subjects.query.memoGet, { projectId, ref: { idType: 'memo_uuid', id: memoId }, space: ctx.space }, queryOptions(ctx.requestId));
        assertStaysInSpace(ctx.space, view, input);
      }
      noteMemoIds(request, [memoId]);
      const { content: text, ...fields } = input;
      const budget = new WriteBudget(config.MEMEX_COMMAND_TIMEOUT_MS, () => natsConnected(deps.nc));
      const contentRef = text === undefined ? undefined : await budget.retry(() => content.write(projectId, memoId, text), (late) => content.remove(late));
      const stored: StoredUpdateInput = { ...fields, ...(contentRef ? { content: contentRef } : {}) };
      const sealed = await keyring.sealJson(projectId, memoId, stored, SEAL_FOR_TRANSIT);
      const { eventSeq } = await withBlob(contentRef, () =>
        commands.send('update', { projectId, memoId, sealed }, { requestId: ctx.requestId, timeoutMs: budget.left() }),
      );
      await awaitSearchConsistency(deps, eventSeq);
      return { ok: true };
    },
  );

  app.delete(
    '/api/v1/memo/:memo_id',
    {
      config: { access: { scope: 'memos:write', action: 'memo.delete' } },
      schema: {
        operationId: 'deleteMemo',
        summary: 'Delete a memo',
        description: 'Erases the memo, its content, summary, tags, chunks and vectors everywhere. Answers 204.',
        tags: ['memos'],
        params: MemoIdParams,
        querystring: MemoIdQuery,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const ref = memoRef(request.params, request.query);
      const memoId = await resolveOwn(ctx.projectId, ref, ctx.requestId, ctx.space);
      noteMemoIds(request, [memoId]);
      const { eventSeq } = await commands.send('delete', { projectId: ctx.projectId, memoId }, commandOptions(ctx.requestId));
      await awaitSearchConsistency(deps, eventSeq);
      return reply.code(204).send();
    },
  );
}
