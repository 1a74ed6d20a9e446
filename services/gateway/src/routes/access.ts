/**
 * Keys and tokens over HTTP (scope `keys:admin`): scoped keys stored hashed, short-lived signed
 * tokens for end users. Nothing minted here is wider than the caller: its scopes, space or lifetime.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  CreateKeyBody,
  CreateTokenBody,
  CreatedKey,
  CreatedToken,
  ErrorResponse,
  KeyIdParams,
  KeyListResponse,
  MemexError,
  SCOPES,
  parseCreateKeyBody,
  parseCreateTokenBody,
  withinParent,
  type KeyInfo,
} from '@memex/contracts';
import { Directory, signToken, type KeyListing } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import type { Caller } from '../auth/scopes';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse };
const ProjectQuery = Type.Object({ project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })) });

function keyInfo({ keyId, record, lastUsedAt }: KeyListing): KeyInfo {
  return {
    key_id: keyId,
    name: record.name ?? (record.scopes ? '' : 'owner'),
    scopes: [...(record.scopes ?? SCOPES)],
    filters: record.filters ?? [],
    expires_at: record.expiresAt ?? null,
    created_at: record.createdAt,
    last_used_at: lastUsedAt,
  };
}

/** Whether `caller` may hand out (or revoke) access with these scopes, filters and expiry. */
function narrowerThanCaller(caller: Caller, child: { scopes: KeyInfo['scopes']; filters: KeyInfo['filters']; expiresAtMs: number | null }): boolean {
  if (caller.owner) return true;
  if (!withinParent(caller, child)) return false;
  return caller.expiresAt === null || (child.expiresAtMs !== null && child.expiresAtMs <= caller.expiresAt);
}

export function accessRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  let opened: Promise<Directory> | undefined;
  const directory = () =>
    (opened ??= Directory.open(deps.nc, { replicas: deps.config.MEMEX_NATS_REPLICAS }).catch((error: unknown) => {
      opened = undefined;
      throw error;
    }));

  app.post(
    '/api/v1/project/keys',
    {
      config: { access: { scope: 'keys:admin', action: 'keys.create' } },
      schema: {
        operationId: 'createKey',
        summary: 'Create a scoped key',
        description:
          'A key confined to `scopes` and to the knowledge space `filters` (ANDed into everything it reads, searches ' +
          'and writes), until `expires_at`. The secret is in this answer only; it is stored hashed. A key cannot create ' +
          'one wider than itself: every scope its own, every filter of its space kept, expiring no later (403).',
        tags: ['access'],
        querystring: ProjectQuery,
        body: CreateKeyBody,
        response: { 200: CreatedKey, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const input = parseCreateKeyBody(request.body);
      if (!narrowerThanCaller(ctx.caller, { ...input, expiresAtMs: input.expiresAt ? Date.parse(input.expiresAt) : null })) throw new MemexError('AccessDenied');
      const { keyId, apiKey, record } = await (await directory()).createKey(ctx.projectId, input);
      return { key_id: keyId, api_key: apiKey, name: input.name, scopes: input.scopes, filters: input.filters, expires_at: input.expiresAt, created_at: record.createdAt };
    },
  );

  app.get(
    '/api/v1/project/keys',
    {
      config: { access: { scope: 'keys:admin', action: 'keys.list' } },
      schema: {
        operationId: 'listKeys',
        summary: "List the project's keys",
        description: 'Every live key, owner keys included (with every scope), oldest first; never a secret.',
        tags: ['access'],
        querystring: ProjectQuery,
        response: { 200: KeyListResponse, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const keys = await (await directory()).projectKeys(ctx.projectId);
      return { results: keys.map(keyInfo) };
    },
  );

  app.delete(
    '/api/v1/project/keys/:key_id',
    {
      config: { access: { scope: 'keys:admin', action: 'keys.delete' } },
      schema: {
        operationId: 'deleteKey',
        summary: 'Revoke a key',
        description: 'Answers 204; every gateway refuses the key (403), and every token it minted, within a second or two.',
        tags: ['access'],
        params: KeyIdParams,
        querystring: ProjectQuery,
        response: { 204: { type: 'null', description: 'Revoked' }, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const keyId = (request.params as { key_id: string }).key_id;
      const dir = await directory();
      const target = (await dir.projectKeys(ctx.projectId)).find((k) => k.keyId === keyId);
      if (!target) throw new MemexError('KeyNotFound');
      const info = keyInfo(target);
      // A scoped admin revokes only what it could have made.
      if (!narrowerThanCaller(ctx.caller, { ...info, expiresAtMs: info.expires_at ? Date.parse(info.expires_at) : null })) throw new MemexError('AccessDenied');
      if (!(await dir.deleteKey(ctx.projectId, keyId))) throw new MemexError('KeyNotFound');
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/project/tokens',
    {
      config: { access: { scope: 'keys:admin', action: 'tokens.create' } },
      schema: {
        operationId: 'createToken',
        summary: 'Mint a short-lived token',
        description:
          'A signed token (`Authorization: Bearer <token>`) with `scopes` and the space `filters`, for `ttl_s` seconds ' +
          '(at most 86400, and never past the minting key or token). Any gateway verifies it without a lookup; it stops ' +
          'working when it expires, when the key that minted it is revoked, or when the project key is rotated.',
        tags: ['access'],
        querystring: ProjectQuery,
        body: CreateTokenBody,
        response: { 200: CreatedToken, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const input = parseCreateTokenBody(request.body);
      // A token dies with the key that minted it: an organization token has no key to die with.
      if (ctx.caller.keyId === null) throw new MemexError('AccessDenied');
      const expiresAtMs = Math.min(Date.now() + input.ttlS * 1000, ctx.caller.expiresAt ?? Infinity);
      if (!narrowerThanCaller(ctx.caller, { ...input, expiresAtMs })) throw new MemexError('AccessDenied');
      const secret = deps.credentials.project(ctx.projectId)?.tokenSecret ?? (await (await directory()).tokenSecret(ctx.projectId));
      const token = signToken(secret, {
        p: ctx.projectId,
        k: ctx.caller.keyId,
        s: input.scopes,
        f: input.filters,
        e: expiresAtMs,
        ...(input.subject !== null ? { sub: input.subject } : {}),
      });
      return { token, expires_at: new Date(expiresAtMs).toISOString() };
    },
  );
}
