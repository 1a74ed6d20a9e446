import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { extractTraceFrom, startSpan, tracingOn } from './context';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

const serverSpans = new WeakMap<IncomingMessage, Span>();

/**
 * Makes every request `server` takes a SERVER span (continuing a client's `traceparent`) that is
 * active for all the request's handling, body events included, and ends when the response closes
 * (a streamed answer: at its end). Call once, after the framework attached its request listener.
 * Off: does nothing.
 */
export function traceHttpRequests(server: Server, scheme: 'http' | 'https'): void {
  if (!tracingOn()) return;
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const span = startSpan(req.method ?? 'HTTP', {
      kind: SpanKind.SERVER,
      parent: extractTraceFrom(req.headers),
      attributes: {
        'http.request.method': req.method ?? '_OTHER',
        'url.scheme': scheme,
        'url.path': path,
        'network.protocol.version': req.httpVersion,
        ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}),
      },
    });
    if (!span) {
      for (const listener of listeners) listener.call(server, req, res);
      return;
    }
    serverSpans.set(req, span);
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    const active = trace.setSpan(context.active(), span);
    context.bind(active, req);
    context.bind(active, res);
    context.with(active, () => {
      for (const listener of listeners) listener.call(server, req, res);
    });
  });
}

/** Names a request's server span by its route (`POST /api/v1/memo`) once the router has matched it. */
export function nameHttpSpan(req: IncomingMessage, route: string | undefined, requestId: string): void {
  const span = serverSpans.get(req);
  if (!span) return;
  span.setAttribute('memex.request_id', requestId);
  if (!route) return;
  span.updateName(`${req.method ?? 'HTTP'} ${route}`);
  span.setAttribute('http.route', route);
}
