import type { MsgHdrs, NatsConnection, Subscription } from '@nats-io/nats-core';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { Headers, MemexError, type QueryReply } from '@memex/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { decodeJson, EncodedJson, encodeJson } from '../nats/codec';
import { fitsPayload } from '../nats/payload';
import { requestReply } from '../nats/replyInbox';
import { extractTrace, failSpan, inSpan, injectTrace, messagingAttributes, SpanKind } from '../tracing/context';

export interface QueryContext {
  requestId: string | undefined;
  logger: Logger;
  headers: MsgHdrs | undefined;
}

export type QueryHandler<Req, Res> = (request: Req, context: QueryContext) => Promise<Res>;

/** How `serveQuery`'s answers begin when they hold a value (JSON.stringify keeps the keys' order), and end. */
const VALUE_PREFIX = Buffer.from('{"ok":true,"value":');
const VALUE_SUFFIX = Buffer.from('}');
const CLOSING_BRACE = 0x7d;

/**
 * Answers requests on `subject` in a queue group (one instance of the group answers each). Expected
 * failures travel as `{ ok: false, error }`; unexpected ones are logged and sent as `Internal`. A reply
 * larger than the server's `max_payload` is never published: the caller gets `ReplyTooLarge`. A value
 * the handler encoded itself ({@link EncodedJson}) goes out as it is.
 */
export function serveQuery<Req, Res>(
  nc: NatsConnection,
  {
    subject,
    queue,
    logger,
    handler,
    metrics,
  }: { subject: string; queue: string; logger: Logger; handler: QueryHandler<Req, Res>; metrics?: Metrics },
): Subscription {
  const served = metrics?.counter('memex_queries_total', 'Queries answered, by subject and outcome');
  const seconds = metrics?.histogram('memex_query_seconds', 'Time to answer a query');
  return nc.subscribe(subject, {
    queue,
    callback: (err, msg) => {
      if (err) {
        logger.error({ err, subject }, 'query subscription failed');
        return;
      }
      const requestId = msg.headers?.get(Headers.requestId) || undefined;
      const log = requestId ? logger.child({ requestId }) : logger;
      void inSpan(`process ${subject}`, () => ({ kind: SpanKind.SERVER, parent: extractTrace(msg.headers), attributes: messagingAttributes('process', subject, { 'messaging.consumer.group.name': queue }) }), async (span) => {
        const started = performance.now();
        let reply: QueryReply<Res>;
        try {
          const request = decodeJson<Req>(msg.data);
          reply = { ok: true, value: await handler(request, { requestId, logger: log, headers: msg.headers }) };
        } catch (error) {
          failSpan(span, error);
          if (error instanceof MemexError) {
            reply = { ok: false, error: error.toWire() };
          } else {
            log.error({ err: error, subject }, 'query handler failed');
            reply = { ok: false, error: { code: 'Internal' } };
          }
        }
        seconds?.observe((performance.now() - started) / 1000, { subject });
        served?.inc({ subject, outcome: reply.ok ? 'ok' : reply.error.code });
        if (!msg.reply) return;
        let data = reply.ok && reply.value instanceof EncodedJson ? Buffer.concat([VALUE_PREFIX, reply.value.bytes, VALUE_SUFFIX]) : encodeJson(reply);
        if (!fitsPayload(nc, data)) {
          // Publishing it would throw MAX_PAYLOAD_EXCEEDED (and take the process down): say so instead.
          log.error({ subject, bytes: data.byteLength }, 'query reply exceeds the NATS max_payload; answered ReplyTooLarge');
          served?.inc({ subject, outcome: 'ReplyTooLarge' });
          data = encodeJson({ ok: false, error: new MemexError('ReplyTooLarge').toWire() } satisfies QueryReply<Res>);
        }
        try {
          msg.respond(data);
        } catch (error) {
          log.error({ err: error, subject }, 'could not send a query reply');
        }
      });
    },
  });
}

export interface QueryOptions {
  timeoutMs?: number;
  requestId?: string;
}

/** Sends a request and returns the value, or throws the `MemexError` the handler (or NATS) gave. */
export async function query<Req, Res>(nc: NatsConnection, subject: string, request: Req, options: QueryOptions = {}): Promise<Res> {
  return valueOf<Res>((await ask(nc, subject, request, options)).data);
}

/**
 * `query` for a caller that passes the value on without reading it (the gateway answering HTTP with
 * it): the value's JSON as the handler's side encoded it, never decoded here. An error is thrown as
 * `query` throws it.
 */
export async function queryJson<Req>(nc: NatsConnection, subject: string, request: Req, options: QueryOptions = {}): Promise<Buffer> {
  const { data } = await ask(nc, subject, request, options);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length > VALUE_PREFIX.length && bytes[bytes.length - 1] === CLOSING_BRACE && bytes.subarray(0, VALUE_PREFIX.length).equals(VALUE_PREFIX)) {
    // A copy: the caller keeps it past the connection's reading of the next messages.
    return Buffer.from(bytes.subarray(VALUE_PREFIX.length, bytes.length - 1));
  }
  // An error, or an answer encoded some other way.
  return Buffer.from(JSON.stringify(valueOf<unknown>(data)));
}

function ask<Req>(nc: NatsConnection, subject: string, request: Req, options: QueryOptions) {
  return inSpan(`send ${subject}`, () => ({ kind: SpanKind.CLIENT, attributes: messagingAttributes('send', subject) }), () => {
    const hdrs = natsHeaders();
    if (options.requestId) hdrs.set(Headers.requestId, options.requestId);
    injectTrace(hdrs);
    return requestReply(nc, subject, encodeJson(request), { headers: hdrs, timeoutMs: options.timeoutMs ?? 10_000 });
  });
}

function valueOf<Res>(data: Uint8Array): Res {
  let reply: QueryReply<Res>;
  try {
    reply = decodeJson<QueryReply<Res>>(data);
  } catch (error) {
    throw new MemexError('Internal', undefined, { cause: error });
  }
  if (reply.ok) return reply.value;
  throw MemexError.fromWire(reply.error);
}
