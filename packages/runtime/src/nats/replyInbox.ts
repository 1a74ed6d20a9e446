import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { MemexError } from '@memex/contracts';

interface Waiting {
  resolve: (msg: Msg) => void;
  reject: (error: MemexError) => void;
  timer: NodeJS.Timeout;
}

/**
 * The replies a client waits for, on one subscription (`<inbox>.<token>`): a wait costs its token
 * and a timer, nothing more. nats.js's own `request()` settles every request, answered or not, by
 * building an Error with its stack trace (~5% of the gateway's CPU per search). Commands and queries
 * both wait here.
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
 * The connection's shared reply inbox and a fresh token on it. Throws `ServiceUnavailable` on a
 * closed connection.
 */
export function sharedReplyInbox(nc: NatsConnection): { inbox: ReplyInbox; token: string } {
  let entry = shared.get(nc);
  if (!entry) {
    if (nc.isClosed()) throw new MemexError('ServiceUnavailable', undefined, { cause: new Error('the NATS connection is closed') });
    shared.set(nc, (entry = { inbox: new ReplyInbox(nc), next: 0 }));
  }
  return { inbox: entry.inbox, token: (entry.next++).toString(36) };
}
