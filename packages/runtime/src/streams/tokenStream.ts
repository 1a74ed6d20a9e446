import { headers as natsHeaders, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { context } from '@opentelemetry/api';
import { injectTrace, tracingOn } from '../tracing/context';
import {
  Headers,
  MemexError,
  Subjects,
  TOKEN_STREAM_HEARTBEAT_MS,
  TOKEN_STREAM_IDLE_TIMEOUT_MS,
  TOKEN_STREAM_WINDOW,
  type TokenStreamControl,
  type TokenStreamMessage,
} from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';

type Payload = TokenStreamMessage extends infer M ? (M extends { seq: number } ? Omit<M, 'seq'> : never) : never;

export interface TokenStreamOptions {
  window?: number;
  heartbeatMs?: number;
  idleTimeoutMs?: number;
}

/**
 * The agent's end of a token stream. `send` resolves once the message is out and blocks while the
 * reader is `window` messages behind (its credit), so generation runs at the reader's pace. While
 * there is nothing to send it sends heartbeats, which the reader answers with a credit; `signal`
 * aborts when the reader cancels, or sends no credit for the idle timeout (it is gone or stuck).
 */
export class TokenStreamWriter {
  private seq = 0;
  private credited = 0;
  private lastSent = Date.now();
  private readonly controller = new AbortController();
  private readonly sub: Subscription;
  private readonly heartbeat: NodeJS.Timeout;
  private creditWaiter: (() => void) | undefined;
  private lastCreditAt = Date.now();
  private readonly window: number;
  private readonly idleTimeoutMs: number;
  /** The trace of the query that opened the stream: every token message carries it. */
  private readonly trace = tracingOn() ? context.active() : undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly streamId: string,
    options: TokenStreamOptions = {},
  ) {
    this.window = options.window ?? TOKEN_STREAM_WINDOW;
    this.idleTimeoutMs = options.idleTimeoutMs ?? TOKEN_STREAM_IDLE_TIMEOUT_MS;
    const heartbeatMs = options.heartbeatMs ?? TOKEN_STREAM_HEARTBEAT_MS;
    this.sub = nc.subscribe(Subjects.tokenStreamControl(streamId), {
      callback: (err, msg) => {
        if (err) return;
        const control = decodeJson<TokenStreamControl>(msg.data);
        if (control.kind === 'credit') {
          this.credited = Math.max(this.credited, control.upTo);
          this.lastCreditAt = Date.now();
          this.creditWaiter?.();
        } else {
          this.abort(new MemexError('AgentError', `cancelled: ${control.reason}`));
        }
      },
    });
    this.heartbeat = setInterval(() => {
      if (this.controller.signal.aborted) return;
      // Readers credit at least once per heartbeat; silence means the reader is gone or stuck.
      if (Date.now() - this.lastCreditAt > this.idleTimeoutMs) {
        this.abort(new MemexError('Timeout', undefined, { cause: new Error('the stream reader stopped reading') }));
        return;
      }
      if (Date.now() - this.lastSent >= heartbeatMs && this.seq - this.credited < this.window) this.publish({ kind: 'heartbeat' });
    }, Math.max(50, Math.floor(heartbeatMs / 2)));
    this.heartbeat.unref();
  }

  /** Aborts when the reader cancels or goes silent; pass it to the LLM call. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the stream from this side (e.g. the agent is shutting down). */
  abort(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    this.creditWaiter?.();
  }

  private publish(payload: Payload): void {
    this.seq += 1;
    this.lastSent = Date.now();
    const hdrs = natsHeaders();
    hdrs.set(Headers.streamSeq, String(this.seq));
    if (this.trace) injectTrace(hdrs, this.trace);
    this.nc.publish(Subjects.tokenStream(this.streamId), encodeJson({ ...payload, seq: this.seq }), { headers: hdrs });
  }

  /** Sends one message, waiting for credit first; rejects once the stream is aborted. */
  async send(payload: Payload): Promise<void> {
    while (this.seq - this.credited >= this.window) {
      if (this.controller.signal.aborted) throw this.controller.signal.reason;
      await new Promise<void>((resolve) => {
        this.creditWaiter = resolve;
        setTimeout(resolve, 250).unref();
      });
      this.creditWaiter = undefined;
    }
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
    this.publish(payload);
  }

  /** Sends a terminal message even when aborted (best effort), and stops listening. */
  finish(payload: Extract<Payload, { kind: 'end' | 'fail' }>): void {
    this.publish(payload);
    this.close();
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.sub.unsubscribe();
  }
}

/**
 * The gateway's end of a token stream: an async iterator of messages in order. It credits the
 * writer as the consumer takes messages, so it never holds more than `window` of them; it fails on
 * a gap in the numbering or when the writer stays silent past the idle timeout (heartbeats keep a
 * slow model alive). Create it BEFORE asking the agent to start, on the connection that asks: the
 * server then has the subscription before the request, so the first token cannot be missed.
 */
export class TokenStreamReader implements AsyncIterable<TokenStreamMessage> {
  private readonly sub: Subscription;
  private readonly queue: TokenStreamMessage[] = [];
  private wake: (() => void) | undefined;
  private failure: Error | undefined;
  private expected = 1;
  private taken = 0;
  private creditedUpTo = 0;
  private lastCreditSent = 0;
  private done = false;
  private readonly window: number;
  private readonly idleTimeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    readonly streamId: string,
    options: TokenStreamOptions = {},
  ) {
    this.window = options.window ?? TOKEN_STREAM_WINDOW;
    this.idleTimeoutMs = options.idleTimeoutMs ?? TOKEN_STREAM_IDLE_TIMEOUT_MS;
    this.sub = nc.subscribe(Subjects.tokenStream(streamId), {
      callback: (err, msg) => {
        if (err) {
          this.fail(err);
          return;
        }
        const message = decodeJson<TokenStreamMessage>(msg.data);
        if (message.seq !== this.expected) {
          this.fail(new Error(`token stream ${streamId}: expected message ${this.expected}, got ${message.seq}`));
          return;
        }
        this.expected += 1;
        if (message.kind === 'heartbeat') {
          // A heartbeat counts as taken only when nothing is waiting ahead of it; either way the
          // credit it answers with tells the writer this reader is still alive.
          if (this.queue.length === 0) this.taken = message.seq;
          this.credit();
          return;
        }
        this.queue.push(message);
        this.wake?.();
      },
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.wake?.();
  }

  /** Credits the writer for everything up to `seq` in batches of half a window. */
  private take(seq: number): void {
    this.taken = seq;
    if (this.taken - this.creditedUpTo >= Math.max(1, Math.floor(this.window / 2))) this.credit();
  }

  private credit(): void {
    this.creditedUpTo = this.taken;
    this.lastCreditSent = Date.now();
    this.control({ kind: 'credit', upTo: this.taken });
  }

  private control(message: TokenStreamControl): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(Subjects.tokenStreamControl(this.streamId), encodeJson(message));
  }

  /** Tells the writer to stop (the client went away) and ends iteration. */
  cancel(reason: string): void {
    if (this.done) return;
    this.control({ kind: 'cancel', reason });
    this.close();
  }

  close(): void {
    this.done = true;
    this.sub.unsubscribe();
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TokenStreamMessage> {
    try {
      for (;;) {
        const next = this.queue.shift();
        if (next) {
          yield next;
          // Credit only after the consumer came back for more: its write has gone through.
          this.take(next.seq);
          if (next.kind === 'end' || next.kind === 'fail') return;
          continue;
        }
        if (this.failure) throw this.failure;
        if (this.done) return;
        // Caught up: credit what was taken so a slow trickle of tokens never starves the writer.
        if (this.taken > this.creditedUpTo && Date.now() - this.lastCreditSent >= 500) this.credit();
        const lastSeen = this.expected;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, this.idleTimeoutMs).unref();
        });
        this.wake = undefined;
        if (this.queue.length === 0 && !this.failure && !this.done && this.expected === lastSeen) {
          throw new MemexError('Timeout', undefined, { cause: new Error(`token stream ${this.streamId} went silent`) });
        }
      }
    } finally {
      this.close();
    }
  }
}
