import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import multipart from '@fastify/multipart';
import swaggerUi from '@fastify/swagger-ui';
import { MemexError, errorText } from '@memex/contracts';
import { nameHttpSpan, natsConnected, traceHttpRequests, tracingOn, type Logger } from '@memex/runtime';
import { AuditTrail, parseRetention } from './auth/audit';
import { registerCors, parseCorsOrigins } from './http/cors';
import { registerErrorHandling } from './http/errors';
import type { GatewayDeps } from './http/context';
import { RateLimiter } from './rateLimit/limiter';
import { accessRoutes } from './routes/access';
import { agentRoutes } from './routes/agent';
import { auditRoutes } from './routes/audit';
import { healthRoutes } from './routes/health';
import { consoleRoutes } from './routes/console';
import { mcpRoutes } from './routes/mcp';
import { memoCatalogRoutes } from './routes/memoCatalog';
import { memoFileRoutes } from './routes/memoFiles';
import { memoRoutes } from './routes/memos';
import { eventRoutes } from './routes/events';
import { projectRoutes } from './routes/project';
import { searchRoutes } from './routes/search';
import { webhookRoutes } from './routes/webhooks';

interface BuildGatewayOptions {
  /** PEM certificate and key; without them the app is for `inject()` tests only. */
  https?: { cert: string; key: string };
  logger: Logger;
}

interface OpenApiObject {
  paths?: Record<string, Record<string, { requestBody?: SchemaHolder; responses?: Record<string, SchemaHolder> }>>;
  components?: { schemas?: Record<string, unknown> };
}
interface SchemaHolder {
  content?: Record<string, { schema?: Record<string, unknown> }>;
}

/**
 * Request and response bodies with a TypeBox `$id` (a `title` in the document) become named
 * components referenced by `$ref`, as nested schemas already are, so generated clients get `Memo`,
 * `SearchBody`… instead of anonymous types.
 */
function nameTopLevelSchemas(doc: OpenApiObject): OpenApiObject {
  const schemas = ((doc.components ??= {}).schemas ??= {});
  const name = (holder: SchemaHolder | undefined) => {
    for (const media of Object.values(holder?.content ?? {})) {
      const title = media.schema?.title;
      if (typeof title !== 'string' || !/^[A-Z]\w*$/.test(title)) continue;
      schemas[title] ??= media.schema;
      media.schema = { $ref: `#/components/schemas/${title}` };
    }
  };
  for (const methods of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      name(operation.requestBody);
      for (const response of Object.values(operation.responses ?? {})) name(response);
    }
  }
  return doc;
}

/** Copies each body's and response's `$id` into its `title`, which survives into the document. */
function titled(schema: Record<string, unknown> | undefined): never {
  if (!schema) return schema as never;
  const withTitle = (s: unknown) => (s && typeof s === 'object' && typeof (s as { $id?: unknown }).$id === 'string' ? { ...s, title: (s as { $id: string }).$id } : s);
  const response = schema.response as Record<string, unknown> | undefined;
  return {
    ...schema,
    ...(schema.body ? { body: withTitle(schema.body) } : {}),
    ...(response ? { response: Object.fromEntries(Object.entries(response).map(([code, s]) => [code, withTitle(s)])) } : {}),
  } as never;
}

/**
 * One log line per request, when it completes (Fastify's default is two), naming the route rather
 * than the URL (which may carry a credential); health probes only at debug, so a probe every second
 * does not bury the rest.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? 'unmatched';
    const line = { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) };
    if (error) request.log.error({ ...line, err: error }, 'request failed');
    else if (route === '/healthz' || route === '/readyz') request.log.debug(line, 'request');
    else request.log.info(line, 'request');
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds the gateway's Fastify app. Requests are validated by the contracts' parse functions (the
 * spec fixes the error texts and their order), so Fastify's own schema validation is off and handlers
 * treat bodies as `unknown` until parsed (no type provider: it would type unvalidated input). The
 * TypeBox schemas still drive response serialization and the OpenAPI document at /docs.
 */
export async function buildGateway(deps: GatewayDeps, options: BuildGatewayOptions): Promise<FastifyInstance> {
  const { config } = deps;
  deps.authFailures ??= new RateLimiter({
    limit: config.MEMEX_AUTH_FAILURE_LIMIT,
    windowMs: config.MEMEX_AUTH_FAILURE_WINDOW_MS,
    instance: deps.instance,
  });
  const app = Fastify({
    loggerInstance: options.logger,
    ...(options.https ? { https: { cert: options.https.cert, key: options.https.key } } : {}),
    bodyLimit: config.MEMEX_BODY_LIMIT,
    requestTimeout: config.MEMEX_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.MEMEX_KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: config.MEMEX_REQUEST_TIMEOUT_MS,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // Malformed percent-encoding in a path, and the like: the same `{ error }` shape as every 4xx.
    frameworkErrors: (_error, _request, reply) => {
      void (reply as unknown as { code(n: number): { send(b: unknown): unknown } }).code(400).send({ error: errorText('InvalidUrl') });
    },
    logController: new OneLinePerRequest(),
    // The HTTPS server type differs from the default only in the listener; routes don't care.
  }) as unknown as FastifyInstance;

  // While tracing is on: one SERVER span per request, named by its route once routed.
  traceHttpRequests(app.server, options.https ? 'https' : 'http');
  if (tracingOn()) app.addHook('onRequest', async (request) => nameHttpSpan(request.raw, request.routeOptions.url, request.id));
  app.setValidatorCompiler(() => () => true);
  // JSON only: a text/plain body is 415, not a string handed to a JSON validator.
  app.removeContentTypeParser('text/plain');
  // Many clients send Content-Type: application/json on every request, a bodiless DELETE included:
  // an empty body is "no body", not malformed JSON. Anything else goes to Fastify's parser, which
  // also refuses prototype-poisoning keys.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  const requests = deps.metrics.counter('memex_http_requests_total', 'HTTP requests, by route and status');
  const seconds = deps.metrics.histogram('memex_http_request_seconds', 'HTTP request time (streamed answers: to the end)');
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    seconds.observe(reply.elapsedTime / 1000, { route });
  });
  // Every authenticated call, answered or refused, is recorded once it is answered: one object
  // queued in memory, written in batches off the request path (auth/audit.ts). MEMEX_AUDIT=off
  // records nothing on this gateway.
  const audit = (deps.audit ??= new AuditTrail(deps.nc, deps.jsm, {
    retentionMs: parseRetention(config.MEMEX_AUDIT_RETENTION),
    replicas: config.MEMEX_NATS_REPLICAS,
    queries: config.MEMEX_AUDIT_QUERIES,
    logger: deps.logger,
  }));
  // Declared up front so every request object keeps one shape (a property added later deoptimizes).
  app.decorateRequest('auditNote', undefined);
  if (config.MEMEX_AUDIT === 'on') {
    app.addHook('onResponse', (request, reply, done) => {
      const note = request.auditNote;
      if (note) audit.record(note, reply.statusCode, request.id);
      done();
    });
  }
  app.addHook('onClose', async () => audit.settle());
  // Cross-origin pages (MEMEX_CORS_ORIGINS) get their preflights answered before authentication.
  registerCors(app, parseCorsOrigins(config.MEMEX_CORS_ORIGINS));
  registerErrorHandling(app, () => !natsConnected(deps.nc));
  // While NATS is unreachable every API call would wait for a timeout: refuse at once instead.
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/api/') && !natsConnected(deps.nc)) throw new MemexError('ServiceUnavailable');
  });

  await app.register(swagger, {
    // Components keep their TypeBox `$id` as their name (`Memo`, `SearchBody`…), so generators name types well.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url }) => ({ schema: titled(schema as Record<string, unknown>), url }),
    transformObject: (documentObject) => nameTopLevelSchemas((documentObject as { openapiObject: OpenApiObject }).openapiObject),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Memex API',
        version: '1.0.0',
        description: 'Memos, semantic search, RAG chat and document generation. Every call needs `Authorization: Bearer <key>`.',
      },
      // Relative: paths resolve against wherever this document was fetched from (this gateway).
      servers: [{ url: '/', description: 'This Memex gateway (HTTPS)' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A project API key, or an organization token with project_id' },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  // Uploads (multipart POST /api/v1/memo) are read as parts by the route, within MEMEX_UPLOAD_LIMIT.
  await app.register(multipart);

  healthRoutes(app, deps);
  memoRoutes(app, deps);
  memoCatalogRoutes(app, deps);
  memoFileRoutes(app, deps);
  searchRoutes(app, deps);
  agentRoutes(app, deps);
  projectRoutes(app, deps);
  accessRoutes(app, deps);
  auditRoutes(app, deps);
  eventRoutes(app, deps);
  webhookRoutes(app, deps);
  mcpRoutes(app, deps);
  consoleRoutes(app);
  return app;
}
