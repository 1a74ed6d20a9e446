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
  webhookView,
  type WebhookDelivery,
  type WebhookRecord,
} from '@memex/contracts';
import { RefusedAddressError, WebhookStore, decodeJson, newWebhookSecret, resolveWebhookHost } from '@memex/runtime';
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

  const find = async (projectId: string, webhookId: string): Promise<WebhookRecord> => {
    const record = isUuid(webhookId) ? await (await open()).get(projectId, webhookId) : undefined;
    if (!record) throw new MemexError('WebhookNotFound');
    return record;
  };

  app.post(
    '/api/v1/webhooks',
    {
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
      const record: WebhookRecord = {
        webhook_id: randomUUID(),
        project_id: ctx.projectId,
        url: input.url.href,
        events: input.events,
        description: input.description,
        secret: newWebhookSecret(),
        created_at: new Date().toISOString(),
        disabled: false,
        disabled_reason: null,
        failing_since: null,
      };
      await webhooks.put(record);
      return { webhook_id: record.webhook_id, url: record.url, events: record.events, secret: record.secret, created_at: record.created_at };
    },
  );

  app.get(
    '/api/v1/webhooks',
    {
      schema: { operationId: 'listWebhooks', summary: 'List the project’s webhooks (without secrets)', tags: ['webhooks'], ...ProjectQuery, response: { 200: WebhookList, ...errors } },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      return { results: (await (await open()).list(ctx.projectId)).map(webhookView) };
    },
  );

  app.delete(
    '/api/v1/webhooks/:webhook_id',
    {
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
      await find(ctx.projectId, webhookId);
      await (await open()).delete(ctx.projectId, webhookId);
      // The dispatchers stop on the KV change; the consumer goes now so nothing is pulled meanwhile.
      await deps.jsm.consumers.delete(Streams.feed, WebhookConsumers.durable(webhookId)).catch(() => undefined);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/v1/webhooks/:webhook_id/deliveries',
    {
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
      await find(ctx.projectId, webhookId);
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
