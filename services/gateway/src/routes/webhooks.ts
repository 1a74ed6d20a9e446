import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { jetstream } from '@nats-io/jetstream';
import {
  CreateWebhookBody,
  CreatedWebhook,
  ErrorResponse,
  MemexError,
  Streams,
  Subjects,
  WebhookConsumers,
  WebhookDeliveries,
  WebhookIdParams,
  WebhookList,
  isUuid,
  parseCreateWebhookBody,
  withinParent,
  webhookView,
  type WebhookDelivery,
  type WebhookRecord,
} from '@memex/contracts';
import { RefusedAddressError, WebhookStore, decodeJson, newWebhookSecret, resolveWebhookHost, sealWebhookSecret, shredWebhookSecret } from '@memex/runtime';
import { hasScope, type Caller } from '../auth/scopes';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { readRange } from '../http/streamRead';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse };

/** Most webhooks one project may have. */
export const MAX_WEBHOOKS_PER_PROJECT = 50;
/** Most delivery attempts a deliveries listing shows (the newest). */
const DELIVERIES_SHOWN = 200;

const ProjectQuery = { querystring: { type: 'object', properties: { project_id: { type: 'string' } } } } as const;

/**
 * Webhook registrations: create (the secret is answered this once), list (never the secrets),
 * delete, and the latest delivery attempts. The memo service's dispatcher delivers.
 */
export function webhookRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  // Made on first use: the OpenAPI document builds the app without a connection.
  let jsClient: ReturnType<typeof jetstream> | undefined;
  const js = () => (jsClient ??= jetstream(deps.nc));
  let store: Promise<WebhookStore> | undefined;
  const open = () =>
    (store ??= WebhookStore.open(deps.nc, deps.config.MEMEX_NATS_REPLICAS).catch((error: unknown) => {
      store = undefined;
      throw error;
    }));
  const allowPrivate = deps.config.MEMEX_WEBHOOK_ALLOW_PRIVATE;

  /** A webhook the caller may manage: an owner any of the project's, a scoped key those within its own space. */
  const visible = (caller: Caller, record: WebhookRecord): boolean =>
    caller.owner || withinParent({ scopes: [], space: caller.space }, { scopes: [], filters: record.filters ?? [] });
  const find = async (caller: Caller, webhookId: string): Promise<WebhookRecord> => {
    const record = isUuid(webhookId) ? await (await open()).get(caller.projectId, webhookId) : undefined;
    if (!record || !visible(caller, record)) throw new MemexError('WebhookNotFound');
    return record;
  };

  app.post(
    '/api/v1/webhooks',
    {
      config: { access: { scope: 'webhooks:admin', action: 'webhooks.create' } },
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook',
        description:
          'Events of the project are POSTed to `url`, signed the Standard Webhooks way with `secret` (shown only in this answer). ' +
          'Only https URLs that resolve to public addresses are accepted.',
        tags: ['webhooks'],
        body: CreateWebhookBody,
        response: { 200: CreatedWebhook, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.body));
      // A webhook is a way to read the feed: registering one takes events:read too.
      if (!hasScope(ctx.caller, 'events:read')) throw new MemexError('AccessDenied');
      const input = parseCreateWebhookBody(request.body, allowPrivate);
      try {
        await resolveWebhookHost(input.url.hostname, allowPrivate);
      } catch (error) {
        if (error instanceof RefusedAddressError) throw new MemexError('WebhookUrlRefused', error.message);
        throw new MemexError('InvalidRequest', `url: ${input.url.hostname} does not resolve`);
      }
      const webhooks = await open();
      if ((await webhooks.list(ctx.projectId)).length >= MAX_WEBHOOKS_PER_PROJECT) {
        throw new MemexError('InvalidRequest', `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks`);
      }
      const webhookId = randomUUID();
      const secret = newWebhookSecret();
      const record: WebhookRecord = {
        webhook_id: webhookId,
        project_id: ctx.projectId,
        url: input.url.href,
        events: input.events,
        description: input.description,
        secret_sealed: await sealWebhookSecret(deps.content.keyring, ctx.projectId, webhookId, secret),
        filters: ctx.space,
        // It stops with the key (for a token: the key that minted it) and when the caller expires.
        key_id: ctx.caller.owner ? null : ctx.caller.keyId,
        expires_at: ctx.caller.expiresAt === null ? null : new Date(ctx.caller.expiresAt).toISOString(),
        created_at: new Date().toISOString(),
        disabled: false,
        disabled_reason: null,
        failing_since: null,
      };
      await webhooks.put(record);
      return { webhook_id: record.webhook_id, url: record.url, events: record.events, secret, created_at: record.created_at };
    },
  );

  app.get(
    '/api/v1/webhooks',
    {
      config: { access: { scope: 'webhooks:admin', action: 'webhooks.list' } },
      schema: { operationId: 'listWebhooks', summary: 'List the project’s webhooks (without secrets)', tags: ['webhooks'], ...ProjectQuery, response: { 200: WebhookList, ...errors } },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      return { results: (await (await open()).list(ctx.projectId)).filter((r) => visible(ctx.caller, r)).map(webhookView) };
    },
  );

  app.delete(
    '/api/v1/webhooks/:webhook_id',
    {
      config: { access: { scope: 'webhooks:admin', action: 'webhooks.delete' } },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook',
        description: 'No further deliveries start; its delivery records age out.',
        tags: ['webhooks'],
        params: WebhookIdParams,
        ...ProjectQuery,
        response: { 204: { type: 'null' }, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const { webhook_id: webhookId } = request.params as { webhook_id: string };
      await find(ctx.caller, webhookId);
      await (await open()).delete(ctx.projectId, webhookId);
      // The dispatchers stop on the KV change; the consumer goes now so nothing is pulled meanwhile.
      await deps.jsm.consumers.delete(Streams.feed, WebhookConsumers.durable(webhookId)).catch(() => undefined);
      // The secret's key goes last: a delivery still in flight signs with what it opened already.
      await shredWebhookSecret(deps.content.keyring, ctx.projectId, webhookId);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/v1/webhooks/:webhook_id/deliveries',
    {
      config: { access: { scope: 'webhooks:admin', action: 'webhooks.deliveries' } },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'A webhook’s latest delivery attempts, newest first',
        tags: ['webhooks'],
        params: WebhookIdParams,
        ...ProjectQuery,
        response: { 200: WebhookDeliveries, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const { webhook_id: webhookId } = request.params as { webhook_id: string };
      await find(ctx.caller, webhookId);
      const msgs = await readRange(deps.jsm, js(), {
        stream: Streams.webhookDeliveries,
        filter: Subjects.webhookDeliveries(webhookId),
        afterSeq: 0,
        limit: DELIVERIES_SHOWN,
      });
      return { results: msgs.map((m) => decodeJson<WebhookDelivery>(m.data)).reverse() };
    },
  );
}
