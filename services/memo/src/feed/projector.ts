import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { Consumers, Subjects, type FeedEventBody, type MemoEventMessage } from '@memex/contracts';
import { consumeMemoEvents, encodeJson, type ConsumerRunner, type Keyring, type Logger, type Metrics, type RetryOverrides } from '@memex/runtime';
import { isPending, toDomainEvents, fold } from '../memo/decider';
import type { MemoCommandService } from '../memo/handlers';
import { eraseMemoFeed } from './erase';
import { FEED_SOURCE_TYPES, feedEventOf } from './mapping';

export interface FeedProjectorOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  keyring: Keyring;
  commands: MemoCommandService;
  logger: Logger;
  metrics?: Metrics;
  retry?: RetryOverrides;
}

/** The feed message id of the public event a memo event stands for: a redelivery publishes nothing new. */
export function feedMessageId(sourceEventId: string): string {
  return `feed:${sourceEventId}`;
}

/**
 * Whether the memo event at `version` is the one that made its revision ready: after it the memo
 * is no longer pending, before it it was. Read from the memo's stream, so the answer is the same
 * on every delivery and only one of a revision's results ever says yes.
 */
async function completesRevision(commands: MemoCommandService, event: MemoEventMessage): Promise<boolean> {
  const { memoId, projectId } = event.data as { memoId: string; projectId: string };
  const { events } = await commands.load(projectId, memoId);
  const upTo = events.filter((e) => e.version <= event.version);
  if (upTo.at(-1)?.version !== event.version) return false;
  const after = fold(toDomainEvents(upTo));
  if (after.status !== 'active' || isPending(after.memo)) return false;
  const before = fold(toDomainEvents(upTo.slice(0, -1)));
  return before.status === 'active' && isPending(before.memo);
}

/**
 * Projects the memo events into the public feed: a durable consumer of the memo event stream in
 * batches, publishing each batch's public events in order (one subject per project, memo and type)
 * with a message id derived from the source event, so a redelivered batch adds no duplicates. A
 * memo's erasure erases its earlier public events.
 */
export function startFeedProjector(options: FeedProjectorOptions): Promise<ConsumerRunner> {
  const { js, jsm, keyring, commands, logger, metrics, retry } = options;
  const published = metrics?.counter('memex_feed_events_total', 'Public events published to the feed, by type');
  return consumeMemoEvents({
    js,
    keyring,
    consumer: Consumers.feed,
    logger: logger.child({ consumer: Consumers.feed }),
    // One batch at a time keeps the feed in the order of the memo event stream.
    concurrency: 1,
    batchSize: 256,
    types: FEED_SOURCE_TYPES,
    ...(metrics ? { metrics } : {}),
    ...(retry ? { retry } : {}),
    handleBatch: async (batch) => {
      const bodies: (FeedEventBody | undefined)[] = await Promise.all(batch.map(({ event }) => feedEventOf(event, () => completesRevision(commands, event))));
      // Sent back to back, acknowledged together: the stream stores them in this order.
      const acks = bodies.map((body, i) =>
        body
          ? js.publish(Subjects.feed(body.project_id, body.memo_uuid, body.type), encodeJson(body), { msgID: feedMessageId(batch[i]!.event.id) }).then(async (ack) => {
              published?.inc({ type: body.type });
              // An erased memo keeps only its tombstone in the feed (a redelivered one erases again).
              if (body.type === 'memo.deleted' || body.type === 'memo.expired') await eraseMemoFeed(jsm, js, body.project_id, body.memo_uuid, ack.seq);
            })
          : Promise.resolve(),
      );
      const settled = await Promise.allSettled(acks);
      return settled.map((s) => (s.status === 'fulfilled' ? undefined : { error: s.reason }));
    },
  });
}
