import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { Headers, Streams, type ConsumerName, type MemoEventMessage, type MemoEventType, type SealedEventBody } from '@memex/contracts';
import { KeyErasedError, type Keyring } from '../keyring/keyring';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { decodeJson } from '../nats/codec';
import { runConsumer, type ConsumerRunner, type Disposition } from '../nats/consumer';
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
  /** Messages (with `handleBatch`: batches) handled at once. */
  concurrency?: number;
  /**
   * Must be idempotent: a message can arrive twice, and events of one memo can overtake each other.
   * Optional with `handleBatch` (then one event is a batch of one).
   */
  handle?: (event: MemoEventMessage, context: EventContext) => Promise<void>;
  /**
   * Handles the events that arrived together (up to `batchSize`), as idempotent as `handle`, and
   * resolves once all of them are done; only then are they acknowledged. When it throws, each event
   * is handled again alone, so one bad event is retried and dead-lettered alone.
   */
  handleBatch?: (events: { event: MemoEventMessage; context: EventContext }[]) => Promise<void>;
  batchSize?: number;
  /**
   * The event types this consumer acts on: any other is acknowledged unopened (no key read, no
   * decryption). Default: every type.
   */
  types?: readonly MemoEventType[];
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

type Opened = { kind: 'event'; event: MemoEventMessage; context: EventContext } | { kind: 'settled'; outcome: Disposition };

/** Runs a durable consumer of memo events; a handler that throws is retried with backoff. */
export function consumeMemoEvents(options: ConsumeMemoEventsOptions): Promise<ConsumerRunner> {
  const { js, consumer, logger, concurrency = 8, onDeadLetter, metrics, retry, keyring, batchSize } = options;
  const wanted = options.types ? new Set<string>(options.types) : undefined;
  const handleBatch = options.handleBatch;
  const handle =
    options.handle ?? (handleBatch ? (event: MemoEventMessage, context: EventContext) => handleBatch([{ event, context }]) : undefined);
  if (!handle) throw new Error('consumeMemoEvents needs handle or handleBatch');
  const parse = (msg: JsMsg) => decodeJson<MemoEventMessage>(msg.data);

  const open = async (msg: JsMsg): Promise<Opened> => {
    let event: MemoEventMessage;
    try {
      event = parse(msg);
    } catch (error) {
      logger.error({ err: error, seq: msg.seq }, 'unreadable memo event skipped');
      return { kind: 'settled', outcome: { kind: 'ack' } };
    }
    // The type is in the clear: events this consumer ignores are never opened.
    if (wanted && !wanted.has(event.type)) return { kind: 'settled', outcome: { kind: 'ack' } };
    try {
      event = await openEvent(keyring, event);
    } catch (error) {
      // Erased memo: nothing left to process, and retrying cannot bring the key back.
      if (error instanceof KeyErasedError) return { kind: 'settled', outcome: { kind: 'ack' } };
      return { kind: 'settled', outcome: { kind: 'retry', error } };
    }
    // The request that caused the event, so its processing logs line up with the request's.
    const requestId = msg.headers?.get(Headers.requestId);
    const log = requestId ? logger.child({ requestId, memoEvent: event.type }) : logger;
    return { kind: 'event', event, context: { streamSeq: msg.seq, deliveryCount: msg.info.deliveryCount, logger: log } };
  };

  return runConsumer({
    js,
    stream: Streams.memoEvents,
    consumer,
    logger,
    concurrency,
    ...(metrics ? { metrics } : {}),
    ...(retry ? { retry } : {}),
    handle: async (msg) => {
      const opened = await open(msg);
      if (opened.kind === 'settled') return opened.outcome;
      try {
        await handle(opened.event, opened.context);
        return { kind: 'ack' };
      } catch (error) {
        return { kind: 'retry', error };
      }
    },
    ...(handleBatch
      ? {
          batchSize: batchSize ?? 64,
          handleBatch: async (msgs: JsMsg[]) => {
            const opened = await Promise.all(msgs.map(open));
            const events = opened.flatMap((o) => (o.kind === 'event' ? [{ event: o.event, context: o.context }] : []));
            // Throws for the whole batch: the runner then handles each message alone.
            if (events.length > 0) await handleBatch(events);
            return opened.map((o) => (o.kind === 'settled' ? o.outcome : { kind: 'ack' as const }));
          },
        }
      : {}),
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
