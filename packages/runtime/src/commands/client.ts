import { randomUUID } from 'node:crypto';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import {
  Headers,
  MemexError,
  Subjects,
  type BatchItemResult,
  type CommandReply,
  type MemoCommandName,
  type MemoCommandPayload,
  type MemoCommandResult,
} from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';
import { natsConnected } from '../nats/connection';
import { payloadBudget } from '../nats/payload';
import { fromNatsError } from '../nats/errors';
import { ReplyInbox } from '../nats/replyInbox';
import { publishToStream } from '../nats/streamPublish';
import { inSpan, injectTrace, messagingAttributes, SpanKind } from '../tracing/context';

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

/** The batch commands: each carries `items` and answers one result per item. */
type BatchCommandName = 'record-chunks-batch' | 'record-summary-batch';
type BatchItem<N extends BatchCommandName> = MemoCommandPayload<N>['items'][number];

/**
 * Sends commands to the memo service over its JetStream work queue and waits for the handler's
 * reply on a per-client inbox. A command carries its deadline: if no handler takes it in time, it is
 * dropped unexecuted and the caller gets `Timeout`.
 */
export class CommandClient {
  private readonly replies: ReplyInbox;

  constructor(
    private readonly nc: NatsConnection,
    private readonly defaultTimeoutMs = 10_000,
  ) {
    this.replies = new ReplyInbox(nc);
  }

  send<N extends MemoCommandName>(name: N, payload: MemoCommandPayload<N>, options: SendOptions = {}): Promise<CommandOutcome<MemoCommandResult<N>>> {
    const subject = Subjects.memoCommand(name);
    return inSpan(`send ${subject}`, () => ({ kind: SpanKind.PRODUCER, attributes: messagingAttributes('send', subject) }), () => this.sendNow(name, subject, payload, options));
  }

  /**
   * Sends `items` as few batch commands as fit the NATS payload (one item too large for a share of
   * it goes alone), concurrently; resolves to one result per item, in order. Throws if any of the
   * commands failed as a whole.
   */
  async sendBatch<N extends BatchCommandName>(name: N, items: readonly BatchItem<N>[], options: Omit<SendOptions, 'commandId'> = {}): Promise<BatchItemResult[]> {
    if (items.length === 0) return [];
    // Half the budget: the reply, and headers, stay well inside it too.
    const budget = payloadBudget(this.nc) / 2;
    const parts: BatchItem<N>[][] = [];
    let size = 0;
    for (const item of items) {
      const bytes = JSON.stringify(item).length + 1;
      const last = parts.at(-1);
      if (last && size + bytes <= budget) {
        last.push(item);
        size += bytes;
      } else {
        parts.push([item]);
        size = bytes;
      }
    }
    const replies = await Promise.all(
      parts.map(async (part) => {
        const { result } = await this.send(name, { items: part } as MemoCommandPayload<N>, options);
        const { results } = result as { results: BatchItemResult[] };
        if (results.length !== part.length) throw new Error(`${name} answered ${results.length} of ${part.length} items`);
        return results;
      }),
    );
    return replies.flat();
  }

  private async sendNow<N extends MemoCommandName>(
    name: N,
    subject: string,
    payload: MemoCommandPayload<N>,
    options: SendOptions,
  ): Promise<CommandOutcome<MemoCommandResult<N>>> {
    // While NATS is unreachable a publish would only wait for its timeout: refuse at once instead.
    if (!natsConnected(this.nc)) throw new MemexError('ServiceUnavailable', undefined, { cause: new Error('NATS is not connected') });
    const commandId = options.commandId ?? randomUUID();
    // One send, one stored message: publish retries within this call reuse the token as Nats-Msg-Id.
    const token = randomUUID().replaceAll('-', '');
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const deadline = Date.now() + timeoutMs;

    const reply = this.replies.wait(token, timeoutMs, `command ${name}`);
    // It can time out while the publish still retries: handled (awaited below, or dropped with it).
    reply.catch(() => undefined);

    const hdrs = natsHeaders();
    hdrs.set(Headers.replyTo, this.replies.subject(token));
    hdrs.set(Headers.deadline, String(deadline));
    hdrs.set(Headers.correlationId, commandId);
    if (options.requestId) hdrs.set(Headers.requestId, options.requestId);
    injectTrace(hdrs);
    const data = encodeJson(payload);
    try {
      await this.publishWithRetry(subject, data, token, hdrs, deadline);
    } catch (error) {
      this.replies.forget(token);
      throw fromNatsError(error, subject);
    }
    let outcome: CommandReply<unknown>;
    try {
      outcome = decodeJson<CommandReply<unknown>>((await reply).data);
    } catch (error) {
      if (error instanceof MemexError) throw error;
      outcome = { ok: false, error: { code: 'Internal' } };
    }
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
        await publishToStream(this.nc, subject, data, { msgID, headers, timeoutMs: Math.max(500, Math.min(5_000, deadline - Date.now())) });
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
    this.replies.close();
  }
}
