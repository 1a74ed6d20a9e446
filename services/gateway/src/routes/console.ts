import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_DIST, consoleBuilt } from '@memex/console';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** Everything the console loads comes from here; no inline script, no other origin. */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The operator console (packages/console, built by `pnpm install`) at /console. Hashed assets are
 * cached for a year; index.html is revalidated so a new build shows at once. No key travels in a URL:
 * the console keeps it in the tab's session storage and sends it as a bearer header.
 */
export function consoleRoutes(app: FastifyInstance): void {
  const send = async (file: string, reply: FastifyReply) => {
    const path = normalize(join(CONSOLE_DIST, file));
    if (!path.startsWith(CONSOLE_DIST + sep)) return reply.code(404).send({ error: 'Not found' });
    let body: Buffer;
    try {
      body = await readFile(path);
    } catch {
      return reply.code(404).send({ error: 'Not found' });
    }
    return reply
      .header('content-type', TYPES[extname(path)] ?? 'application/octet-stream')
      .header('cache-control', file.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(body);
  };
  const notBuilt = { error: 'The console is not built: run `pnpm install` (or `pnpm --filter @memex/console build`)' };
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/'));
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => (consoleBuilt() ? send('index.html', reply) : reply.code(503).send(notBuilt)));
  app.get('/console/*', { schema: { hide: true } }, async (request, reply) => send((request.params as { '*': string })['*'], reply));
}
