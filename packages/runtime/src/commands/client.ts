import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { createInbox, headers as natsHeaders, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import {
  Headers,
  MemexError,
  Subjects,
  type CommandReply,
  type MemoCommandName,
  type MemoCommandPayload,
  type MemoCommandResult,
} from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';
import { natsConnected } from '../nats/connection';
import { fromNatsError } from '../nats/errors';

export interface SendOptions {
  requestId?: string;
  /**
   * The command's identity: the memo service runs a command id once per memo and answers a repeat
   * as the first run did. Defaults to a fresh id (every send is a new command).
   */
  commandId?: string;
  timeoutMs?: number;
}

export interface CommandOutcome<R> {
  result: R;
  /** Memo event stream sequence of the last event the command published, if any. */
  eventSeq?: number;
}

interface Pending {
  resolve: (reply: CommandReply<unknown>) => void;
  timer: NodeJS.Timeout;
}

/**
 * Sends commands to the memo service over its JetStream work queue and waits for the handler's
 * reply on a per-client inbox. A command carries its deadline: if no handler takes it in time, it is
 * dropped unexecuted and the caller gets `Timeout`.
 */
export class CommandClient {
  private readonly inbox = createInbox('_INBOX.memex');
  private readonly pending = new Map<string, Pending>();
  private readonly sub: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly defaultTimeoutMs = 10_000,
  ) {
    this.sub = nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const token = msg.subject.slice(this.inbox.length + 1);
        const waiting = this.pending.get(token);
        if (!waiting) return;
        this.pending.delete(token);
        clearTimeout(waiting.timer);
        try {
          waiting.resolve(decodeJson<CommandReply<unknown>>(msg.data));
        } catch {
          waiting.resolve({ ok: false, error: { code: 'Internal' } });
        }
      },
    });
  }

  async send<N extends MemoCommandName>(
    name: N,
    payload: MemoCommandPayload<N>,
    options: SendOptions = {},
  ): Promise<CommandOutcome<MemoCommandResult<N>>> {
    // While NATS is unreachable a publish would only wait for its timeout: refuse at once instead.
    if (!natsConnected(this.nc)) throw new MemexError('ServiceUnavailable', undefined, { cause: new Error('NATS is not connected') });
    const commandId = options.commandId ?? randomUUID();
    // One send, one stored message: publish retries within this call reuse the token as Nats-Msg-Id.
    const token = randomUUID().replaceAll('-', '');
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const deadline = Date.now() + timeoutMs;

    const reply = new Promise<CommandReply<unknown>>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        resolve({ ok: false, error: { code: 'Timeout' } });
      }, timeoutMs);
      this.pending.set(token, { resolve, timer });
    });

    const hdrs = natsHeaders();
    hdrs.set(Headers.replyTo, `${this.inbox}.${token}`);
    hdrs.set(Headers.deadline, String(deadline));
    hdrs.set(Headers.correlationId, commandId);
    if (options.requestId) hdrs.set(Headers.requestId, options.requestId);
    const subject = Subjects.memoCommand(name);
    const data = encodeJson(payload);
    try {
      await this.publishWithRetry(subject, data, token, hdrs, deadline);
    } catch (error) {
      const waiting = this.pending.get(token);
      if (waiting) clearTimeout(waiting.timer);
      this.pending.delete(token);
      throw fromNatsError(error, subject);
    }
    const outcome = await reply;
    if (!outcome.ok) throw MemexError.fromWire(outcome.error);
    return {
      result: outcome.result as MemoCommandResult<N>,
      ...(outcome.eventSeq !== undefined ? { eventSeq: outcome.eventSeq } : {}),
    };
  }

  private async publishWithRetry(
    subject: string,
    data: Uint8Array,
    msgID: string,
    headers: ReturnType<typeof natsHeaders>,
    deadline: number,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1 && !natsConnected(this.nc)) throw new MemexError('ServiceUnavailable', undefined, { cause: new Error('NATS is not connected') });
      try {
        await this.js.publish(subject, data, { msgID, headers, timeout: Math.max(500, Math.min(5_000, deadline - Date.now())) });
        return;
      } catch (error) {
        // The same msgID makes a retry safe: JetStream stores the command at most once. A stream
        // without a leader (a cluster electing one after a server stopped) takes seconds, so this
        // keeps trying, backing off to 1 s, until the deadline.
        const wait = Math.min(1_000, 50 * 2 ** (attempt - 1));
        if (Date.now() + wait > deadline) throw error;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  close(): void {
    this.sub.unsubscribe();
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve({ ok: false, error: { code: 'ServiceUnavailable' } });
    }
    this.pending.clear();
  }
}
