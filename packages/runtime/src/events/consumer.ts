import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { Headers, Streams, type ConsumerName, type MemoEventMessage, type SealedEventBody } from '@memex/contracts';
import { KeyErasedError, type Keyring } from '../keyring/keyring';
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
  /** Opens sealed events; an event whose memo key is erased is acknowledged and skipped. */
  keyring: Keyring;
}

/** Opens a sealed event message in place of its envelope; throws `KeyErasedError` once the key is gone. */
export async function openEvent(keyring: Keyring, event: MemoEventMessage): Promise<MemoEventMessage> {
  if (event.sealed === undefined) return event;
  const { memoId, projectId } = event.data as { memoId: string; projectId: string };
  const body = await keyring.openJson<SealedEventBody>(projectId, memoId, event.sealed);
  const { sealed: _sealed, ...envelope } = event;
  return { ...envelope, data: body.data, memo: body.memo } as MemoEventMessage;
}

/** Runs a durable consumer of memo events; a handler that throws is retried with backoff. */
export function consumeMemoEvents(options: ConsumeMemoEventsOptions): Promise<ConsumerRunner> {
  const { js, consumer, logger, concurrency = 8, handle, onDeadLetter, metrics, retry, keyring } = options;
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
      try {
        event = await openEvent(keyring, event);
      } catch (error) {
        // Erased memo: nothing left to process, and retrying cannot bring the key back.
        if (error instanceof KeyErasedError) return { kind: 'ack' };
        return { kind: 'retry', error };
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
    ...(onDeadLetter
      ? {
          onDeadLetter: async (msg: JsMsg, error: unknown) => {
            const event = await openEvent(keyring, parse(msg)).catch(() => undefined);
            if (event) await onDeadLetter(event, error);
          },
        }
      : {}),
  });
}
