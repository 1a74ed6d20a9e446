import type { MsgHdrs, NatsConnection, Subscription } from '@nats-io/nats-core';
import { createInbox, headers as natsHeaders } from '@nats-io/nats-core';
import { Headers, MemexError, type QueryReply } from '@memex/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { decodeJson, encodeJson } from '../nats/codec';
import { fromNatsError } from '../nats/errors';
import { fitsPayload } from '../nats/payload';

export interface QueryContext {
  requestId: string | undefined;
  logger: Logger;
  headers: MsgHdrs | undefined;
}

export type QueryHandler<Req, Res> = (request: Req, context: QueryContext) => Promise<Res>;

/**
 * Answers requests on `subject` in a queue group (one instance of the group answers each). Expected
 * failures travel as `{ ok: false, error }`; unexpected ones are logged and sent as `Internal`. A reply
 * larger than the server's `max_payload` is never published: the caller gets `ReplyTooLarge`.
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
      void (async () => {
        const started = performance.now();
        let reply: QueryReply<Res>;
        try {
          const request = decodeJson<Req>(msg.data);
          reply = { ok: true, value: await handler(request, { requestId, logger: log, headers: msg.headers }) };
        } catch (error) {
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
        let data = encodeJson(reply);
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
      })();
    },
  });
}

export interface QueryOptions {
  timeoutMs?: number;
  requestId?: string;
}

/** A reply still awaited: how to settle the caller, and its timeout. */
interface Waiting {
  resolve: (data: Uint8Array) => void;
  reject: (error: MemexError) => void;
  timer: NodeJS.Timeout;
}

/**
 * The replies to one connection's queries, on one inbox subscription (`<inbox>.<token>`). nats.js's
 * own `request` builds an Error (with its stack trace) to settle every request, answered or not: at
 * thousands of searches a second that was ~5% of the gateway's CPU. Here nothing is allocated for an
 * answered query but its token and timer.
 */
class QueryReplies {
  private readonly inbox = createInbox('_INBOX.memex');
  private readonly waiting = new Map<string, Waiting>();
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const token = msg.subject.slice(this.inbox.length + 1);
        const waiting = this.waiting.get(token);
        if (!waiting) return;
        this.waiting.delete(token);
        clearTimeout(waiting.timer);
        // The server's answer when nothing subscribes to the subject (no instance serves it now).
        if (msg.data.length === 0 && msg.headers?.code === 503) waiting.reject(new MemexError('ServiceUnavailable'));
        else waiting.resolve(msg.data);
      },
    });
    void nc.closed().then(() => {
      for (const [token, waiting] of this.waiting) {
        clearTimeout(waiting.timer);
        this.waiting.delete(token);
        waiting.reject(new MemexError('ServiceUnavailable', undefined, { cause: new Error('the NATS connection closed') }));
      }
    });
  }

  request(subject: string, data: Uint8Array, hdrs: MsgHdrs, timeoutMs: number): Promise<Uint8Array> {
    const token = (this.next++).toString(36);
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new MemexError('Timeout', undefined, { cause: new Error(`${subject}: no answer in ${timeoutMs} ms`) }));
      }, timeoutMs);
      this.waiting.set(token, { resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}.${token}`, headers: hdrs });
      } catch (error) {
        clearTimeout(timer);
        this.waiting.delete(token);
        reject(fromNatsError(error, subject));
      }
    });
  }
}

const repliesByConnection = new WeakMap<NatsConnection, QueryReplies>();

/** Sends a request and returns the value, or throws the `MemexError` the handler (or NATS) gave. */
export async function query<Req, Res>(nc: NatsConnection, subject: string, request: Req, options: QueryOptions = {}): Promise<Res> {
  const hdrs = natsHeaders();
  if (options.requestId) hdrs.set(Headers.requestId, options.requestId);
  let replies = repliesByConnection.get(nc);
  if (!replies) {
    if (nc.isClosed()) throw new MemexError('ServiceUnavailable', undefined, { cause: new Error('the NATS connection is closed') });
    repliesByConnection.set(nc, (replies = new QueryReplies(nc)));
  }
  const data = await replies.request(subject, encodeJson(request), hdrs, options.timeoutMs ?? 10_000);
  let reply: QueryReply<Res>;
  try {
    reply = decodeJson<QueryReply<Res>>(data);
  } catch (error) {
    throw new MemexError('Internal', undefined, { cause: error });
  }
  if (reply.ok) return reply.value;
  throw MemexError.fromWire(reply.error);
}
