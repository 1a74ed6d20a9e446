import type { JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { Headers, Streams, Subjects, type MemoEventMessage } from '@memex/contracts';
import { encodeMemoEvent, publishToStream, type Logger, type Metrics } from '@memex/runtime';
import type { EventStore, StoredEvent } from '../eventStore/port';

interface OutboxOptions {
  nc: NatsConnection;
  jsm: JetStreamManager;
  store: EventStore;
  logger: Logger;
  /** Brings the read model up to date with a stream before its events go out (crash recovery). */
  project: (streamName: string) => Promise<void>;
  /** How often to look for events nobody published (a crashed process's, or a failed publish). */
  sweepIntervalMs?: number;
  /** Events younger than this are left to the process that appended them. */
  sweepGraceMs?: number;
  metrics?: Metrics;
  /**
   * Sealed boxes as bytes after the JSON, not base64 inside it (see encodeMemoEvent); false publishes
   * the JSON form the version before reads (see formats.ts). Default true.
   */
  compact?: boolean;
  /**
   * Runs after a tombstone is published and the memo's bus messages purged: shreds the memo's key
   * and erases what stores keep on disk. Repeated by the sweep after a crash, so it must be idempotent.
   */
  erased?: (projectId: string, memoId: string) => Promise<void>;
}

/** The bus message of a stored event; a sealed event goes out sealed (see `SealedEventStore`). */
export function toMessage(event: StoredEvent): MemoEventMessage {
  const data = event.data as { memoId: string; projectId: string; sealed?: unknown };
  if (typeof data.sealed === 'string') {
    return {
      id: event.id,
      type: event.type as MemoEventMessage['type'],
      version: event.version,
      occurredAt: event.occurredAt,
      data: { memoId: data.memoId, projectId: data.projectId } as MemoEventMessage['data'],
      memo: null,
      sealed: data.sealed,
    };
  }
  return {
    id: event.id,
    type: event.type as MemoEventMessage['type'],
    version: event.version,
    occurredAt: event.occurredAt,
    data: event.data as MemoEventMessage['data'],
    memo: event.meta.memo ?? null,
  };
}

/**
 * Publishes stored events to the memo event stream: right after a command's append, and from a
 * sweep that republishes whatever is still unpublished (a crash between append and publish loses no
 * event). The event id is the `Nats-Msg-Id`, so a republish inside the two-minute window is dropped
 * by JetStream and consumers dedupe the rest by version. Publishing a `MemoDeleted` also purges the
 * memo's earlier messages (and dead letters) from the bus, keeping only the tombstone.
 */
export class OutboxPublisher {
  private readonly chains = new Map<string, Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly options: OutboxOptions) {}

  /** Publishes events in order; resolves to the stream sequence of the last one. */
  publish(events: readonly StoredEvent[]): Promise<number | undefined> {
    return this.chained(events, true);
  }

  /**
   * Publishes many memos' events pipelined: each memo's in order behind its earlier ones, all memos
   * at once (the acknowledgements awaited together), then marked published in one write. Resolves
   * to the highest stream sequence. An event whose publish failed stays unpublished for the sweep.
   */
  async publishMany(events: readonly StoredEvent[]): Promise<number | undefined> {
    const bySubject = new Map<string, StoredEvent[]>();
    for (const e of events) {
      if (!e.meta.subject) continue;
      const list = bySubject.get(e.meta.subject);
      if (list) list.push(e);
      else bySubject.set(e.meta.subject, [e]);
    }
    const published: string[] = [];
    const outcomes = await Promise.allSettled(
      [...bySubject.values()].map(async (list) => {
        const seq = await this.chained(list, false);
        for (const e of list) published.push(e.id);
        return seq;
      }),
    );
    if (published.length > 0) await this.options.store.markPublished(published);
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    const seqs = outcomes.flatMap((o) => (o.status === 'fulfilled' && o.value !== undefined ? [o.value] : []));
    return seqs.length > 0 ? Math.max(...seqs) : undefined;
  }

  /** Publishes one memo's events behind any still going out for it; `mark`: mark them published after. */
  private chained(events: readonly StoredEvent[], mark: boolean): Promise<number | undefined> {
    const publishable = events.filter((e) => e.meta.subject);
    if (publishable.length === 0) return Promise.resolve(undefined);
    // Events of one memo leave this process in version order.
    const subject = publishable[0]!.meta.subject!;
    const previous = this.chains.get(subject) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.publishNow(publishable, mark));
    this.chains.set(subject, next);
    void next.finally(() => {
      if (this.chains.get(subject) === next) this.chains.delete(subject);
    }).catch(() => undefined);
    return next;
  }

  private async publishNow(events: readonly StoredEvent[], mark: boolean): Promise<number | undefined> {
    const { nc, jsm, store } = this.options;
    let lastSeq: number | undefined;
    for (const event of events) {
      const subject = event.meta.subject!;
      const hdrs = natsHeaders();
      const { data, headers } = encodeMemoEvent(toMessage(event), { compact: this.options.compact !== false });
      for (const [name, value] of Object.entries(headers)) hdrs.set(name, value);
      if (event.meta.requestId) hdrs.set(Headers.requestId, event.meta.requestId);
      if (event.meta.traceparent) hdrs.set(Headers.traceparent, event.meta.traceparent);
      if (event.meta.tracestate) hdrs.set(Headers.tracestate, event.meta.tracestate);
      const ack = await publishToStream(nc, subject, data, { msgID: event.id, headers: hdrs });
      lastSeq = ack.seq;
      this.options.metrics?.counter('memex_events_published_total', 'Memo events published to the bus').inc({ type: event.type });
      if (event.type === 'MemoDeleted') {
        const { projectId, memoId } = event.data as { projectId: string; memoId: string };
        await jsm.streams.purge(Streams.memoEvents, { filter: subject, keep: 1 });
        await jsm.streams.purge(Streams.deadLetters, { filter: Subjects.deadLettersOfMemo(projectId, memoId) });
        await this.options.erased?.(projectId, memoId);
      }
    }
    if (mark) await store.markPublished(events.map((e) => e.id));
    return lastSeq;
  }

  /** Publishes everything still unpublished; `graceMs` skips events younger than that. */
  async sweep(graceMs = 0): Promise<number> {
    if (this.sweeping) await this.sweeping;
    let count = 0;
    const run = (async () => {
      for (;;) {
        const olderThan = graceMs > 0 ? new Date(Date.now() - graceMs).toISOString() : undefined;
        const batch = await this.options.store.readUnpublished({ limit: 500, ...(olderThan ? { olderThan } : {}) });
        if (batch.length === 0) return;
        const byStream = new Map<string, StoredEvent[]>();
        for (const e of batch) {
          const events = byStream.get(e.streamName);
          if (events) events.push(e);
          else byStream.set(e.streamName, [e]);
        }
        for (const [streamName, events] of byStream) {
          await this.options.project(streamName);
          await this.publish(events);
          count += events.length;
        }
        if (batch.length < 500) return;
      }
    })();
    this.sweeping = run;
    try {
      await run;
    } finally {
      this.sweeping = undefined;
    }
    return count;
  }

  start(): void {
    const { sweepIntervalMs = 1_000, sweepGraceMs = 3_000, logger } = this.options;
    const tick = () => {
      this.sweep(sweepGraceMs)
        .then((n) => {
          if (n > 0) {
            logger.warn({ republished: n }, 'outbox republished events');
            this.options.metrics?.counter('memex_outbox_republished_total', 'Events the outbox sweep published late').inc({}, n);
          }
        })
        .catch((error: unknown) => logger.error({ err: error }, 'outbox sweep failed'))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, sweepIntervalMs);
        });
    };
    this.timer = setTimeout(tick, sweepIntervalMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sweeping) await this.sweeping.catch(() => undefined);
    await Promise.allSettled(this.chains.values());
  }
}
