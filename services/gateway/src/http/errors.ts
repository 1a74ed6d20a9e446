import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MemexError, errorText, httpStatus, type ErrorCode } from '@memex/contracts';

/** Fastify's own request errors, mapped to ours so every 4xx has the same `{ error }` shape. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'InvalidJson',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'InvalidJson',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PayloadTooLarge',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UnsupportedMediaType',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'InvalidRequest',
};

/** How long a refused body may keep arriving after its 413 went out before the connection is cut. */
const LINGER_MS = 10_000;

/**
 * A body refused for its size is still on its way: closing at once makes the client's kernel see a
 * reset while it is sending, and a reset discards the 413 before the client reads it (EPIPE /
 * ECONNRESET instead of an answer). So the answer goes out on a connection that stays open while
 * the rest of the body is read and dropped (as servers do with a "lingering close"), and the
 * connection is cut only if the body keeps coming for longer than `LINGER_MS`.
 */
function lingerAfterTooLarge(request: FastifyRequest, reply: FastifyReply): void {
  reply.removeHeader('connection');
  const raw = request.raw;
  if (raw.complete) return;
  raw.resume();
  const timer = setTimeout(() => raw.socket?.destroy(), LINGER_MS);
  timer.unref();
  const done = () => clearTimeout(timer);
  raw.once('end', done);
  raw.once('close', done);
}

/**
 * One error path for the whole API: `MemexError` → its status and text; Fastify's parse errors → 4xx;
 * anything else is logged and answered 500 without internals.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof MemexError) {
      if (error.status >= 500) request.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
      return reply.code(error.status).send({ error: error.message });
    }
    const code = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (code === 'PayloadTooLarge') lingerAfterTooLarge(request, reply);
    if (code) return reply.code(httpStatus(code)).send({ error: code === 'InvalidRequest' ? error.message : errorText(code) });
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ error: error.message });
    }
    request.log.error({ err: error }, 'unexpected error');
    return reply.code(500).send({ error: errorText('Internal') });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: errorText('NotFound') }));
}
