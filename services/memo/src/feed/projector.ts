import type { JetStreamClient } from '@nats-io/jetstream';
import { Consumers, Subjects, type FeedEventBody, type MemoEventMessage } from '@memex/contracts';
import { consumeMemoEvents, encodeJson, sealFeedEvent, type ConsumerRunner, type Keyring, type Logger, type Metrics, type RetryOverrides } from '@memex/runtime';
import { isPending, toDomainEvents, fold } from '../memo/decider';
import type { MemoCommandService } from '../memo/handlers';
import { FEED_SOURCE_TYPES, feedEventOf } from './mapping';

export interface FeedProjectorOptions {
  js: JetStreamClient;
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
 * batches, publishing each batch's public events in order (one subject per project and type) with
 * a message id derived from the source event, so a redelivered batch adds no duplicates.
 */
export function startFeedProjector(options: FeedProjectorOptions): Promise<ConsumerRunner> {
  const { js, keyring, commands, logger, metrics, retry } = options;
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
      // The reference id is sealed with the memo's key: erasing the memo erases it here too.
      const bodies = await Promise.all(
        batch.map(async ({ event }) => {
          const body: FeedEventBody | undefined = await feedEventOf(event, () => completesRevision(commands, event));
          return body ? sealFeedEvent(keyring, body) : undefined;
        }),
      );
      // Sent back to back, acknowledged together: the stream stores them in this order.
      const acks = bodies.map((body, i) =>
        body
          ? js.publish(Subjects.feed(body.project_id, body.type), encodeJson(body), { msgID: feedMessageId(batch[i]!.event.id) }).then(() => {
              published?.inc({ type: body.type });
            })
          : Promise.resolve(),
      );
      const settled = await Promise.allSettled(acks);
      return settled.map((s) => (s.status === 'fulfilled' ? undefined : { error: s.reason }));
    },
  });
}
