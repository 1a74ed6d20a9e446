import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { MemexError } from '@memex/contracts';
import { fromNatsError } from './errors';

interface Waiting {
  resolve: (msg: Msg) => void;
  reject: (error: MemexError) => void;
  timer: NodeJS.Timeout;
}

/**
 * The replies a client waits for, on one subscription (`<inbox>.<token>`): a wait costs its token
 * and a timer, nothing more. nats.js's own `request()` settles every request, answered or not, by
 * building an Error with its stack trace, a cost on every search. Commands and queries both wait here.
 */
export class ReplyInbox {
  private readonly prefix = createInbox('_INBOX.memex');
  private readonly waiting = new Map<string, Waiting>();
  private readonly sub: Subscription;

  constructor(nc: NatsConnection) {
    this.sub = nc.subscribe(`${this.prefix}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const token = msg.subject.slice(this.prefix.length + 1);
        const waiting = this.waiting.get(token);
        if (!waiting) return;
        this.waiting.delete(token);
        clearTimeout(waiting.timer);
        waiting.resolve(msg);
      },
    });
    void nc.closed().then(() => this.failAll(new Error('the NATS connection closed')));
  }

  /** Where the reply for `token` goes. */
  subject(token: string): string {
    return `${this.prefix}.${token}`;
  }

  /**
   * The message sent to `subject(token)` (a token unique among this inbox's waits); `Timeout` after
   * `timeoutMs`, `ServiceUnavailable` if the connection or the inbox closes first.
   */
  wait(token: string, timeoutMs: number, what: string): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new MemexError('Timeout', undefined, { cause: new Error(`${what}: no answer in ${timeoutMs} ms`) }));
      }, timeoutMs);
      this.waiting.set(token, { resolve, reject, timer });
    });
  }

  /** Stops waiting for `token` (its request could not be sent); its promise never settles. */
  forget(token: string): void {
    const waiting = this.waiting.get(token);
    if (waiting) clearTimeout(waiting.timer);
    this.waiting.delete(token);
  }

  close(): void {
    this.sub.unsubscribe();
    this.failAll(new Error('the client closed'));
  }

  private failAll(cause: Error): void {
    for (const [token, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(token);
      waiting.reject(new MemexError('ServiceUnavailable', undefined, { cause }));
    }
  }
}

/** Each connection's shared inbox (queries, stream publishes), made at its first use; tokens count up. */
const shared = new WeakMap<NatsConnection, { inbox: ReplyInbox; next: number }>();

/**
 * Publishes `data` to `subject` with a reply subject on the connection's shared inbox, and returns
 * the reply: what `nc.request` does, without its Error per request. `ServiceUnavailable` when nothing
 * subscribes to the subject (the server's 503) or the connection is closed, `Timeout` after
 * `timeoutMs`; a publish that fails at once as `fromNatsError` maps it.
 */
export async function requestReply(nc: NatsConnection, subject: string, data: Uint8Array, { headers, timeoutMs }: { headers?: MsgHdrs; timeoutMs: number }): Promise<Msg> {
  let entry = shared.get(nc);
  if (!entry) {
    if (nc.isClosed()) throw new MemexError('ServiceUnavailable', undefined, { cause: new Error('the NATS connection is closed') });
    shared.set(nc, (entry = { inbox: new ReplyInbox(nc), next: 0 }));
  }
  const { inbox } = entry;
  const token = (entry.next++).toString(36);
  const answer = inbox.wait(token, timeoutMs, subject);
  try {
    nc.publish(subject, data, { reply: inbox.subject(token), ...(headers ? { headers } : {}) });
  } catch (error) {
    inbox.forget(token);
    throw fromNatsError(error, subject);
  }
  const msg = await answer;
  if (msg.data.length === 0 && msg.headers?.code === 503) {
    throw new MemexError('ServiceUnavailable', undefined, { cause: new Error(`no responders on ${subject}`) });
  }
  return msg;
}
