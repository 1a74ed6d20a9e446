import type { FastifyInstance } from 'fastify';

/** What a browser page may send and read across origins: the API's own headers, nothing more. */
const ALLOW_METHODS = 'GET, POST, PATCH, DELETE';
const ALLOW_HEADERS = 'authorization, content-type, idempotency-key, x-request-id, mcp-protocol-version';
const EXPOSE_HEADERS = 'x-request-id, ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after, content-disposition';
const MAX_AGE_S = '600';

/**
 * `MEMEX_CORS_ORIGINS`: empty (no cross-origin access), `*`, or comma-separated origins such as
 * `https://app.example.com,http://localhost:5173`. Each must be an origin alone (no path).
 */
export function parseCorsOrigins(text: string): '*' | ReadonlySet<string> {
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length === 1 && parts[0] === '*') return '*';
  const origins = new Set<string>();
  for (const part of parts) {
    let origin: string | undefined;
    try {
      origin = new URL(part).origin;
    } catch {
      origin = undefined;
    }
    if (!origin || origin === 'null' || origin !== part.replace(/\/$/, '')) {
      throw new Error(`MEMEX_CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com, not ${JSON.stringify(part)}`);
    }
    origins.add(origin);
  }
  return origins;
}

/**
 * Lets pages of the allowed origins call the API and MCP endpoint with `Authorization: Bearer`
 * (a token minted for an end user): preflights are answered before authentication, and every
 * answer to an allowed origin carries Access-Control-Allow-Origin. Credentials are never cookies,
 * so Access-Control-Allow-Credentials is never sent. Headers go on the raw response, so streamed
 * (hijacked) answers carry them too. Nothing is added when no origin is allowed.
 */
export function registerCors(app: FastifyInstance, allowed: '*' | ReadonlySet<string>): void {
  if (allowed !== '*' && allowed.size === 0) return;
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined || !(request.url.startsWith('/api/') || request.url.startsWith('/mcp'))) return;
    const raw = reply.raw;
    raw.setHeader('vary', 'Origin');
    if (allowed !== '*' && !allowed.has(origin)) return;
    raw.setHeader('access-control-allow-origin', allowed === '*' ? '*' : origin);
    raw.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      raw.setHeader('access-control-allow-methods', ALLOW_METHODS);
      raw.setHeader('access-control-allow-headers', ALLOW_HEADERS);
      raw.setHeader('access-control-max-age', MAX_AGE_S);
      return reply.code(204).send();
    }
  });
}
