import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { Headers, Subjects, type ConsumerName } from '@memex/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { consumerPolicy, type RetryOverrides } from './topology';

export type Disposition =
  /** Done: acknowledge. */
  | { kind: 'ack' }
  /** Failed, may succeed later: redeliver after a backoff, or dead-letter once the budget is spent. */
  | { kind: 'retry'; error: unknown };

export interface ConsumerRunner {
  /** Stops taking messages and waits for the ones in hand. */
  stop(): Promise<void>;
  /** Resolves when the loop ends (after stop, or on a fatal error). */
  readonly done: Promise<void>;
}

export interface RunConsumerOptions {
  js: JetStreamClient;
  stream: string;
  consumer: ConsumerName;
  logger: Logger;
  /** Messages handled at once (with `handleBatch`: batches handled at once). */
  concurrency: number;
  handle: (msg: JsMsg) => Promise<Disposition>;
  /**
   * Handles several messages at once (one disposition per message, in order). The runner hands it
   * whatever has arrived, up to `batchSize`, and settles each message after it resolves. When it
   * throws, each message of the batch is handled again alone by `handle`, so one bad message fails
   * (and is retried or dead-lettered) alone. A redelivered message is always handled alone.
   */
  handleBatch?: (msgs: JsMsg[]) => Promise<Disposition[]>;
  /** Most messages in one `handleBatch` call (default 64). */
  batchSize?: number;
  /**
   * How long a worker waits for a batch to fill before it starts on fewer messages (default 0: it
   * starts on what has arrived). A few milliseconds turn a trickle of messages into batches: one
   * pull, one handler call and one write of acks for many, at that much latency.
   */
  lingerMs?: number;
  /** Called after a message is moved to the dead-letter stream. */
  onDeadLetter?: (msg: JsMsg, error: unknown) => Promise<void>;
  metrics?: Metrics;
  retry?: RetryOverrides;
}

/** Redelivery delay after the n-th failed delivery: `baseMs` (0.5 s) doubling, at most 30 s. */
export function backoffMs(deliveryCount: number, baseMs = 500): number {
  return Math.min(30_000, baseMs * 2 ** Math.max(0, deliveryCount - 1));
}

/**
 * How long one pull request lives (idle heartbeats every half of it). Bounds how long a consumer
 * stays idle after a NATS restart, at the cost of one pull request per consumer this often.
 */
export const CONSUME_EXPIRES_MS = 5_000;

/**
 * Runs a durable pull consumer: bounded concurrency, explicit acks, `working()` heartbeats for long
 * handlers, exponential backoff on failure and, once `maxDeliver` deliveries have failed, a copy to
 * the dead-letter stream and `term()` so the message stops coming back. Acknowledgements are sent
 * only after the handler has resolved: a crash before that redelivers the message.
 */
export async function runConsumer(options: RunConsumerOptions): Promise<ConsumerRunner> {
  const { js, stream, consumer, logger, concurrency, handle, handleBatch, onDeadLetter, metrics, retry } = options;
  const handled = metrics?.counter('memex_consumer_messages_total', 'Messages a durable consumer handled, by outcome');
  const seconds = metrics?.histogram('memex_consumer_handle_seconds', 'Time to handle one message');
  const batchSeconds = handleBatch ? metrics?.histogram('memex_consumer_batch_seconds', 'Time to handle one batch of messages') : undefined;
  const pending = metrics?.gauge('memex_consumer_pending_messages', 'Messages still waiting for the consumer after the last one it settled');
  const lag = metrics?.gauge('memex_consumer_lag_seconds', 'Age of the last message the consumer settled (publish to settle)');
  const policy = consumerPolicy(consumer, retry);
  const batchSize = handleBatch ? Math.max(1, options.batchSize ?? 64) : 1;
  const lingerMs = Math.max(0, options.lingerMs ?? 0);
  const c = await js.consumers.get(stream, consumer);
  // Enough in hand that the next batches are waiting while one is handled. Pulls expire after
  // CONSUME_EXPIRES_MS rather than the client's 30 s: after a reconnect the client checks the
  // consumer before pulling again, and when that check fails (a restarted server's JetStream still
  // coming up) it waits half to one and a half pull lifetimes before the next try, 15-45 s by default.
  const messages = await c.consume({ max_messages: Math.max(1, concurrency * batchSize * (handleBatch ? 2 : 1)), expires: CONSUME_EXPIRES_MS });
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

  const heartbeat = (msgs: JsMsg[]) => setInterval(() => msgs.forEach((m) => m.working()), Math.max(1_000, policy.ackWaitMs / 3));

  const handleOne = async (msg: JsMsg): Promise<Disposition> => {
    const started = performance.now();
    let outcome: Disposition;
    try {
      outcome = await handle(msg);
    } catch (error) {
      outcome = { kind: 'retry', error };
    }
    seconds?.observe((performance.now() - started) / 1000, { consumer });
    return outcome;
  };

  /**
   * Acks and naks at once (synchronously: the acks of a batch leave in one socket write); a message
   * out of deliveries is dead-lettered, and the returned promise waits for that.
   */
  const settle = (msg: JsMsg, outcome: Disposition): Promise<void> | undefined => {
    pending?.set(msg.info.pending, { consumer });
    lag?.set(Math.max(0, Date.now() - msg.info.timestampNanos / 1e6) / 1000, { consumer });
    if (outcome.kind === 'ack') {
      msg.ack();
      handled?.inc({ consumer, outcome: 'ack' });
      return undefined;
    }
    const requestId = msg.headers?.get(Headers.requestId);
    const log = requestId ? logger.child({ requestId }) : logger;
    const attempt = msg.info.deliveryCount;
    if (attempt < policy.maxDeliver) {
      log.warn({ err: outcome.error, subject: msg.subject, attempt }, 'handler failed; will retry');
      msg.nak(backoffMs(attempt, policy.backoffBaseMs));
      handled?.inc({ consumer, outcome: 'retry' });
      return undefined;
    }
    handled?.inc({ consumer, outcome: 'dead_letter' });
    log.error({ err: outcome.error, subject: msg.subject, attempt }, 'handler failed for good; dead-lettering');
    return (async () => {
      await deadLetter(js, consumer, msg, outcome.error);
      if (onDeadLetter) {
        try {
          await onDeadLetter(msg, outcome.error);
        } catch (error) {
          logger.error({ err: error }, 'dead-letter callback failed');
        }
      }
      msg.term('dead-lettered');
    })();
  };

  const process = async (msg: JsMsg): Promise<void> => {
    const beat = heartbeat([msg]);
    try {
      await settle(msg, await handleOne(msg));
    } finally {
      clearInterval(beat);
    }
  };

  const processBatch = async (msgs: JsMsg[]): Promise<void> => {
    if (msgs.length === 1) return process(msgs[0]!);
    const beat = heartbeat(msgs);
    try {
      const started = performance.now();
      let outcomes: Disposition[];
      try {
        outcomes = await handleBatch!(msgs);
        if (outcomes.length !== msgs.length) throw new Error(`batch handler settled ${outcomes.length} of ${msgs.length} messages`);
        batchSeconds?.observe((performance.now() - started) / 1000, { consumer });
      } catch (error) {
        logger.warn({ err: error, messages: msgs.length }, 'batch failed; handling its messages one by one');
        outcomes = [];
        for (const msg of msgs) outcomes.push(await handleOne(msg));
      }
      const deadLetters = msgs.map((msg, i) => settle(msg, outcomes[i]!));
      await Promise.all(deadLetters);
    } finally {
      clearInterval(beat);
    }
  };

  const single = async () => {
    for await (const msg of messages) {
      if (stopping) break;
      const p = process(msg).catch((error) => logger.error({ err: error }, 'consumer message failed'));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
    await Promise.allSettled(inFlight);
  };

  // Batches: messages that arrive while the workers are busy wait in `queue`; a free worker takes
  // all of them (up to batchSize) at once. An idle worker starts on the next message at once.
  const queue: JsMsg[] = [];
  let waiting: (() => void)[] = [];
  const wake = () => {
    const waiters = waiting;
    waiting = [];
    for (const w of waiters) w();
  };
  let ended = false;
  const maxQueued = Math.max(1, concurrency) * batchSize * 2;
  const take = async (): Promise<JsMsg[] | undefined> => {
    for (;;) {
      if (queue.length > 0) {
        // Let the rest of a burst that arrived with this message land in the queue first.
        await new Promise((r) => setImmediate(r));
        if (lingerMs > 0 && queue.length < batchSize && !stopping) await new Promise((r) => setTimeout(r, lingerMs));
        // Another worker may have taken them meanwhile.
        if (queue.length === 0) continue;
        // A redelivered message (it failed before, perhaps in a batch) goes alone.
        if (queue[0]!.info.deliveryCount > 1) {
          const msg = queue.shift()!;
          wake();
          return [msg];
        }
        const batch: JsMsg[] = [];
        for (let i = 0; i < queue.length && batch.length < batchSize; ) {
          if (queue[i]!.info.deliveryCount > 1) i++;
          else batch.push(queue.splice(i, 1)[0]!);
        }
        // Room in the queue again: the reader may go on.
        wake();
        if (batch.length > 0) return batch;
        continue;
      }
      if (ended || stopping) return undefined;
      await new Promise<void>((r) => waiting.push(r));
    }
  };
  const batched = async () => {
    const workers = Array.from({ length: Math.max(1, concurrency) }, async () => {
      for (let batch = await take(); batch; batch = await take()) {
        const p = processBatch(batch).catch((error) => logger.error({ err: error }, 'consumer batch failed'));
        inFlight.add(p);
        await p;
        inFlight.delete(p);
      }
    });
    for await (const msg of messages) {
      if (stopping) break;
      queue.push(msg);
      wake();
      while (queue.length >= maxQueued && !stopping) await new Promise<void>((r) => waiting.push(r));
    }
    ended = true;
    wake();
    await Promise.allSettled(workers);
  };

  const done = handleBatch ? batched() : single();

  return {
    done,
    async stop() {
      stopping = true;
      await messages.close();
      // Taken but not started: back to the stream at once, for another instance.
      for (const msg of queue.splice(0)) msg.nak();
      wake();
      await Promise.allSettled(inFlight);
    },
  };
}

async function deadLetter(js: JetStreamClient, consumer: ConsumerName, msg: JsMsg, error: unknown): Promise<void> {
  const hdrs = natsHeaders();
  if (msg.headers) for (const [k, v] of msg.headers) for (const value of v) if (k !== 'Nats-Msg-Id') hdrs.append(k, value);
  hdrs.set('Memex-Dead-Letter-Subject', msg.subject);
  hdrs.set('Memex-Dead-Letter-Sequence', String(msg.seq));
  hdrs.set('Memex-Dead-Letter-Reason', String((error as Error)?.message ?? error).slice(0, 1_000));
  try {
    await js.publish(Subjects.deadLetter(consumer, msg.subject), msg.data, { headers: hdrs });
  } catch {
    // The dead-letter copy is best effort; the log line above keeps the failure visible.
  }
}
