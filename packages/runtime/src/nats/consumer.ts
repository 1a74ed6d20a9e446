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
  /** Messages handled at once. */
  concurrency: number;
  handle: (msg: JsMsg) => Promise<Disposition>;
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
 * Runs a durable pull consumer: bounded concurrency, explicit acks, `working()` heartbeats for long
 * handlers, exponential backoff on failure and, once `maxDeliver` deliveries have failed, a copy to
 * the dead-letter stream and `term()` so the message stops coming back.
 */
export async function runConsumer(options: RunConsumerOptions): Promise<ConsumerRunner> {
  const { js, stream, consumer, logger, concurrency, handle, onDeadLetter, metrics, retry } = options;
  const handled = metrics?.counter('memex_consumer_messages_total', 'Messages a durable consumer handled, by outcome');
  const seconds = metrics?.histogram('memex_consumer_handle_seconds', 'Time to handle one message');
  const policy = consumerPolicy(consumer, retry);
  const c = await js.consumers.get(stream, consumer);
  const messages = await c.consume({ max_messages: Math.max(1, concurrency) });
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

  const process = async (msg: JsMsg): Promise<void> => {
    const requestId = msg.headers?.get(Headers.requestId);
    const log = requestId ? logger.child({ requestId }) : logger;
    const heartbeat = setInterval(() => msg.working(), Math.max(1_000, policy.ackWaitMs / 3));
    const started = performance.now();
    try {
      let outcome: Disposition;
      try {
        outcome = await handle(msg);
      } catch (error) {
        outcome = { kind: 'retry', error };
      }
      seconds?.observe((performance.now() - started) / 1000, { consumer });
      if (outcome.kind === 'ack') {
        msg.ack();
        handled?.inc({ consumer, outcome: 'ack' });
        return;
      }
      const attempt = msg.info.deliveryCount;
      if (attempt < policy.maxDeliver) {
        log.warn({ err: outcome.error, subject: msg.subject, attempt }, 'handler failed; will retry');
        msg.nak(backoffMs(attempt, policy.backoffBaseMs));
        handled?.inc({ consumer, outcome: 'retry' });
        return;
      }
      handled?.inc({ consumer, outcome: 'dead_letter' });
      log.error({ err: outcome.error, subject: msg.subject, attempt }, 'handler failed for good; dead-lettering');
      await deadLetter(js, consumer, msg, outcome.error);
      if (onDeadLetter) {
        try {
          await onDeadLetter(msg, outcome.error);
        } catch (error) {
          logger.error({ err: error }, 'dead-letter callback failed');
        }
      }
      msg.term('dead-lettered');
    } finally {
      clearInterval(heartbeat);
    }
  };

  const done = (async () => {
    for await (const msg of messages) {
      if (stopping) break;
      const p = process(msg).catch((error) => logger.error({ err: error }, 'consumer message failed'));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
    await Promise.allSettled(inFlight);
  })();

  return {
    done,
    async stop() {
      stopping = true;
      await messages.close();
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
