import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { Headers, Streams, type ConsumerName, type MemoEventMessage } from '@memex/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { decodeJson } from '../nats/codec';
import { runConsumer, type ConsumerRunner } from '../nats/consumer';
import type { RetryOverrides } from '../nats/topology';

export interface EventContext {
  /** Position in the memo event stream. */
  streamSeq: number;
  deliveryCount: number;
  logger: Logger;
}

export interface ConsumeMemoEventsOptions {
  js: JetStreamClient;
  consumer: ConsumerName;
  logger: Logger;
  concurrency?: number;
  /** Must be idempotent: a message can arrive twice, and events of one memo can overtake each other. */
  handle: (event: MemoEventMessage, context: EventContext) => Promise<void>;
  /** The message failed every delivery and went to the dead-letter stream. */
  onDeadLetter?: (event: MemoEventMessage, error: unknown) => Promise<void>;
  metrics?: Metrics;
  retry?: RetryOverrides;
}

/** Runs a durable consumer of memo events; a handler that throws is retried with backoff. */
export function consumeMemoEvents(options: ConsumeMemoEventsOptions): Promise<ConsumerRunner> {
  const { js, consumer, logger, concurrency = 8, handle, onDeadLetter, metrics, retry } = options;
  const parse = (msg: JsMsg) => decodeJson<MemoEventMessage>(msg.data);
  return runConsumer({
    js,
    stream: Streams.memoEvents,
    consumer,
    logger,
    concurrency,
    ...(metrics ? { metrics } : {}),
    ...(retry ? { retry } : {}),
    handle: async (msg) => {
      let event: MemoEventMessage;
      try {
        event = parse(msg);
      } catch (error) {
        logger.error({ err: error, seq: msg.seq }, 'unreadable memo event skipped');
        return { kind: 'ack' };
      }
      // The request that caused the event, so its processing logs line up with the request's.
      const requestId = msg.headers?.get(Headers.requestId);
      const log = requestId ? logger.child({ requestId, memoEvent: event.type }) : logger;
      try {
        await handle(event, { streamSeq: msg.seq, deliveryCount: msg.info.deliveryCount, logger: log });
        return { kind: 'ack' };
      } catch (error) {
        return { kind: 'retry', error };
      }
    },
    ...(onDeadLetter ? { onDeadLetter: (msg: JsMsg, error: unknown) => onDeadLetter(parse(msg), error) } : {}),
  });
}
