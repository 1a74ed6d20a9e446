import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Takes the response over from Fastify and starts a Server-Sent Events stream on it: no caching,
 * no proxy buffering, the request id in a header (hooks no longer run once the reply is hijacked).
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  });
  return res;
}
