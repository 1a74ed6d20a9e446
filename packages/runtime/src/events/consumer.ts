import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { Headers, Streams, type ConsumerName, type MemoEventMessage, type MemoEventType, type SealedEventBody } from '@memex/contracts';
import { KeyErasedError, type Keyring } from '../keyring/keyring';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { runConsumer, type ConsumerRunner, type Disposition } from '../nats/consumer';
import type { RetryOverrides } from '../nats/topology';
import { extractTrace, inSpan, messagingAttributes, SpanKind } from '../tracing/context';
import { ROOT_CONTEXT, trace, type Link } from '@opentelemetry/api';
import { decodeMemoEvent } from './codec';

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
   * resolves once all of them are done (or with one entry per event: `undefined` for done,
   * `{ error }` for one that failed and is retried alone); only then are they acknowledged. When it
   * throws, each event is handled again alone, so one bad event is retried and dead-lettered alone.
   */
  handleBatch?: (events: { event: MemoEventMessage; context: EventContext }[]) => Promise<void | BatchResults>;
  batchSize?: number;
  /** See `RunConsumerOptions.lingerMs`. */
  lingerMs?: number;
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
  return { ...envelope, data: body.data, memo: body.memo ?? null } as MemoEventMessage;
}

/** Per event of a batch, in order: `undefined` when done, `{ error }` when it failed. */
export type BatchResults = readonly ({ error: unknown } | undefined)[];

/** At most `size` tasks at once across every caller; the others wait their turn (first come, first served). */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = Math.max(1, size);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}

/**
 * Runs `fn` on every item (within `slots` when given, else all at once) and waits for all of them:
 * the results say which failed, for a `handleBatch` whose events succeed or fail one by one.
 */
export async function settleEach<T>(items: readonly T[], fn: (item: T) => Promise<unknown>, slots?: Slots): Promise<BatchResults> {
  return Promise.all(
    items.map(async (item) => {
      try {
        await (slots ? slots.run(() => fn(item)) : fn(item));
        return undefined;
      } catch (error) {
        return { error };
      }
    }),
  );
}

type Opened = { kind: 'event'; event: MemoEventMessage; context: EventContext } | { kind: 'settled'; outcome: Disposition };

const ACK: Disposition = { kind: 'ack' };

/** Runs a durable consumer of memo events; a handler that throws is retried with backoff. */
export function consumeMemoEvents(options: ConsumeMemoEventsOptions): Promise<ConsumerRunner> {
  const { js, consumer, logger, concurrency = 8, onDeadLetter, metrics, retry, keyring, batchSize, lingerMs } = options;
  const wanted = options.types ? new Set<string>(options.types) : undefined;
  const handleBatch = options.handleBatch;
  const handle =
    options.handle ??
    (handleBatch
      ? async (event: MemoEventMessage, context: EventContext) => {
          const [result] = (await handleBatch([{ event, context }])) ?? [];
          if (result) throw result.error;
        }
      : undefined);
  if (!handle) throw new Error('consumeMemoEvents needs handle or handleBatch');
  const parse = (msg: JsMsg) => decodeMemoEvent(msg.data, msg.headers);

  // The publisher names the type in a header: events this consumer ignores are not even parsed (nor traced).
  const ignoredByHeader = (msg: JsMsg): boolean => {
    const headerType = wanted ? msg.headers?.get(Headers.eventType) : undefined;
    return wanted !== undefined && Boolean(headerType) && !wanted.has(headerType!);
  };
  const open = async (msg: JsMsg): Promise<Opened> => {
    if (ignoredByHeader(msg)) return { kind: 'settled', outcome: ACK };
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

  const attributesOf = (msg: JsMsg) =>
    messagingAttributes('process', msg.subject, { 'messaging.consumer.group.name': consumer, 'messaging.message.delivery_count': msg.info.deliveryCount });
  // A batch of one is a child of its event's producer; a larger batch is a root linked to each.
  const batchSpan = (msgs: JsMsg[]) => {
    if (msgs.length === 1) return { kind: SpanKind.CONSUMER, parent: extractTrace(msgs[0]!.headers), attributes: attributesOf(msgs[0]!) };
    const links = msgs.flatMap((m): Link[] => {
      const linked = trace.getSpanContext(extractTrace(m.headers));
      return linked ? [{ context: linked }] : [];
    });
    return {
      kind: SpanKind.CONSUMER,
      parent: ROOT_CONTEXT,
      links,
      attributes: messagingAttributes('process', Streams.memoEvents, { 'messaging.consumer.group.name': consumer, 'messaging.batch.message_count': msgs.length }),
    };
  };

  return runConsumer({
    js,
    stream: Streams.memoEvents,
    consumer,
    logger,
    concurrency,
    ...(metrics ? { metrics } : {}),
    ...(retry ? { retry } : {}),
    // Each handling is a child of the span that produced the event (the memo command's handling).
    handle: (msg) =>
      ignoredByHeader(msg)
        ? Promise.resolve(ACK)
        : inSpan(`process ${consumer}`, () => ({ kind: SpanKind.CONSUMER, parent: extractTrace(msg.headers), attributes: attributesOf(msg) }), async (span) => {
        const opened = await open(msg);
        if (opened.kind === 'settled') return opened.outcome;
        span?.setAttribute('memex.event.type', opened.event.type);
        try {
          await handle(opened.event, opened.context);
          return { kind: 'ack' };
        } catch (error) {
          span?.recordException(error instanceof Error ? error : String(error));
          return { kind: 'retry', error };
        }
      }),
    ...(handleBatch
      ? {
          batchSize: batchSize ?? 64,
          ...(lingerMs !== undefined ? { lingerMs } : {}),
          handleBatch: (msgs: JsMsg[]) => inSpan(`process ${consumer}`, () => batchSpan(msgs), async () => {
            const opened = await Promise.all(msgs.map(open));
            const events = opened.flatMap((o) => (o.kind === 'event' ? [{ event: o.event, context: o.context }] : []));
            // Throws for the whole batch: the runner then handles each message alone.
            const results = events.length > 0 ? await handleBatch(events) : undefined;
            if (results && results.length !== events.length) throw new Error(`batch handler reported ${results.length} of ${events.length} events`);
            let at = 0;
            return opened.map((o): Disposition => {
              if (o.kind === 'settled') return o.outcome;
              const result = results?.[at++];
              return result ? { kind: 'retry', error: result.error } : { kind: 'ack' };
            });
          }),
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
