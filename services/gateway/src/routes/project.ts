import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  ErrorResponse,
  Filter,
  MemexError,
  Nullable,
  parseResummarizeBody,
  ResummarizeBody,
  ResummarizeResponse,
  ResummarizeStatus,
  ScopeSchema,
  Streams,
  Subjects,
  Uuid,
  type ResummarizeReply,
  type ResummarizeRequest,
} from '@memex/contracts';
import { Directory, IndexStateStore, query } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';

const ProjectInfo = Type.Object(
  {
    project_id: Uuid,
    name: Type.String(),
    organization_id: Uuid,
    created_at: Type.String({ format: 'date-time' }),
    rate_limit: Nullable(
      Type.Object({
        limit: Type.Integer({ description: 'Requests per window for the project, across gateway instances' }),
        window_ms: Type.Integer(),
        remaining: Type.Integer({ description: 'Requests left in the current window, this one counted' }),
        reset_s: Type.Integer({ description: 'Seconds until the window resets' }),
      }),
    ),
    access: Type.Object(
      {
        key_id: Nullable(Type.String({ description: 'The key used (for a token: the key that minted it); null for an organization token' })),
        owner: Type.Boolean({ description: 'An owner key: every scope, the whole project' }),
        scopes: Type.Array(ScopeSchema),
        filters: Type.Array(Filter, { description: "The caller's knowledge space" }),
        subject: Nullable(Type.String()),
        expires_at: Nullable(Type.String({ format: 'date-time' })),
      },
      { description: 'What the calling key or token may do, so a console can hide the rest' },
    ),
    embedding: Type.Object({
      active_model: Nullable(Type.String({ description: 'The model the index serves; null before the first indexer started' })),
      reindex: Nullable(
        Type.Object({
          model: Type.String(),
          requested_at: Type.String({ format: 'date-time' }),
          started: Type.Boolean({ description: 'An indexer owns the replay' }),
          replayed: Nullable(Type.Integer()),
          total: Nullable(Type.Integer()),
        }),
      ),
    }),
  },
  { $id: 'ProjectInfo' },
);

const RotatedKey = Type.Object(
  { project_id: Uuid, api_key: Type.String({ description: 'The new key, shown this once; every older key stops working' }) },
  { $id: 'RotatedKey' },
);

const ProjectQuery = Type.Object({ project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })) });

const errors = { 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse };

/** Queueing replays the memo event log for the project's memos before it answers: longer than a query. */
const RESUMMARIZE_TIMEOUT_MS = 120_000;

/**
 * What a console needs to show about the caller's project: its name, its rate limit, the embedding
 * model and a re-index in progress; and key rotation over HTTP (the CLI does it over NATS).
 */
export function projectRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  let stores: Promise<{ directory: Directory; indexState: IndexStateStore }> | undefined;
  const open = () =>
    (stores ??= (async () => ({
      directory: await Directory.open(deps.nc, { replicas: deps.config.MEMEX_NATS_REPLICAS }),
      indexState: await IndexStateStore.open(deps.nc, deps.config.MEMEX_NATS_REPLICAS),
    }))().catch((error: unknown) => {
      stores = undefined;
      throw error;
    }));

  app.get(
    '/api/v1/project',
    {
      config: { access: { scope: 'any', action: 'project.read' } },
      schema: {
        operationId: 'getProject',
        summary: 'Read the caller’s project',
        description: 'Name, rate limit and what is left of it, the active embedding model and any re-index in progress.',
        tags: ['project'],
        querystring: ProjectQuery,
        response: { 200: ProjectInfo, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const project = deps.credentials.project(ctx.projectId);
      if (!project) throw new MemexError('AccessDenied');
      const { state } = await (await open()).indexState.read();
      const header = (name: string) => Number(reply.getHeader(name));
      return {
        project_id: project.id,
        name: project.name,
        organization_id: project.organizationId,
        created_at: project.createdAt,
        access: {
          key_id: ctx.caller.keyId,
          owner: ctx.caller.owner,
          scopes: [...ctx.caller.scopes],
          filters: [...ctx.caller.space],
          subject: ctx.caller.subject,
          expires_at: ctx.caller.expiresAt === null ? null : new Date(ctx.caller.expiresAt).toISOString(),
        },
        rate_limit: deps.limiter.enabled
          ? {
              limit: header('RateLimit-Limit'),
              window_ms: deps.config.MEMEX_RATE_LIMIT_WINDOW_MS,
              remaining: header('RateLimit-Remaining'),
              reset_s: header('RateLimit-Reset'),
            }
          : null,
        embedding: {
          active_model: state?.activeModel ?? null,
          reindex: state?.reindex
            ? {
                model: state.reindex.model,
                requested_at: state.reindex.requestedAt,
                started: state.reindex.owner !== undefined,
                replayed: state.reindex.replayed ?? null,
                total: state.reindex.total ?? null,
              }
            : null,
        },
      };
    },
  );

  app.post(
    '/api/v1/project/key',
    {
      config: { access: { scope: 'owner', action: 'keys.rotate' } },
      schema: {
        operationId: 'rotateProjectKey',
        summary: 'Rotate the project’s API key',
        description:
          'Issues a new project key and revokes every older one (the key this request used included) within a second. ' +
          'The new key is in this answer only; it is stored hashed.',
        tags: ['project'],
        querystring: ProjectQuery,
        response: { 200: RotatedKey, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const apiKey = await (await open()).directory.rotateKey(ctx.projectId);
      request.log.info({ projectId: ctx.projectId }, 'project key rotated over HTTP');
      return { project_id: ctx.projectId, api_key: apiKey };
    },
  );

  app.post(
    '/api/v1/project/resummarize',
    {
      config: { access: { scope: 'owner', action: 'summaries.redo' } },
      schema: {
        operationId: 'resummarizeProject',
        summary: 'Redo the project’s summaries through the model',
        description:
          'Queues the current revision of every live, summarized memo (with `fallback_only`, only those whose ' +
          '`summary_source` is `extractive-fallback`) to be summarized again by the model, without re-uploading. ' +
          'Each new summary replaces the old one (history shows it); a memo the model still cannot summarize keeps its summary. ' +
          '`GET` on the same path counts what is left.',
        tags: ['project'],
        querystring: ProjectQuery,
        body: ResummarizeBody,
        response: { 202: ResummarizeResponse, 400: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const { fallbackOnly } = parseResummarizeBody(request.body);
      const queued = await query<ResummarizeRequest, ResummarizeReply>(
        deps.nc,
        Subjects.query.agentResummarize,
        { projectId: ctx.projectId, fallbackOnly },
        { requestId: ctx.requestId, timeoutMs: RESUMMARIZE_TIMEOUT_MS },
      );
      return reply.code(202).send(queued);
    },
  );

  app.get(
    '/api/v1/project/resummarize',
    {
      config: { access: { scope: 'owner', action: 'summaries.status' } },
      schema: {
        operationId: 'getResummarizeStatus',
        summary: 'Count the project’s summaries still to redo',
        description: 'Memos queued by `POST /api/v1/project/resummarize` and not yet taken; 0 when all are done.',
        tags: ['project'],
        querystring: ProjectQuery,
        response: { 200: ResummarizeStatus, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      // The work queue drops a job once an agent has acknowledged it: what is left is what is to do,
      // counted here so progress shows while no agent runs.
      const subject = Subjects.summaryJobs(ctx.projectId);
      const info = await deps.jsm.streams.info(Streams.summaryJobs, { subjects_filter: subject });
      return { pending: info.state.subjects?.[subject] ?? 0 };
    },
  );
}
