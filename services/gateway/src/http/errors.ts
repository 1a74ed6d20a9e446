import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MemexError, errorText, httpStatus, type ErrorCode } from '@memex/contracts';
import { fromNatsError } from '@memex/runtime';

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
 * The status and `{ error }` text a failure is answered with: `MemexError` → its own; a NATS failure
 * (or any failure while NATS is unreachable) → 503/504; anything else → 500 without internals
 * (`logged` says which, for the caller to log). Also each refused memo of a batch.
 */
export function errorAnswer(error: unknown, natsDown: boolean): { status: number; error: string; logged: 'no' | 'error' | 'nats' | 'unexpected' } {
  if (error instanceof MemexError) return { status: error.status, error: error.message, logged: error.status >= 500 ? 'error' : 'no' };
  const infrastructure = fromNatsError(error, 'request');
  if (infrastructure.code !== 'Internal' || natsDown) {
    const timeout = infrastructure.code === 'Timeout';
    return { status: timeout ? 504 : 503, error: errorText(timeout ? 'Timeout' : 'ServiceUnavailable'), logged: 'nats' };
  }
  return { status: 500, error: errorText('Internal'), logged: 'unexpected' };
}

/**
 * One error path for the whole API: `MemexError` → its status and text; Fastify's parse errors → 4xx;
 * a NATS failure (or any failure while NATS is unreachable, `natsDown`) → 503/504; anything else is
 * logged and answered 500 without internals.
 */
export function registerErrorHandling(app: FastifyInstance, natsDown: () => boolean = () => false): void {
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
    const answer = errorAnswer(error, natsDown());
    request.log.error({ err: error }, answer.logged === 'nats' ? 'request failed: NATS unavailable' : 'unexpected error');
    return reply.code(answer.status).send({ error: answer.error });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: errorText('NotFound') }));
}
