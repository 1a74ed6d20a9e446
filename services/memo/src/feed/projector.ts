import type { JetStreamClient } from '@nats-io/jetstream';
import { Consumers, Subjects, type FeedEventBody, type MemoEventMessage, type StoredFeedEvent } from '@memex/contracts';
import { consumeMemoEvents, encodeJson, FeedSpaces, feedSpaceOf, sealFeedEvent, type ConsumerRunner, type Keyring, type Logger, type Metrics, type RetryOverrides } from '@memex/runtime';
import { isPending, toDomainEvents, fold } from '../memo/decider';
import type { MemoCommandService } from '../memo/handlers';
import { FEED_SOURCE_TYPES, feedEventOf } from './mapping';

export interface FeedProjectorOptions {
  js: JetStreamClient;
  keyring: Keyring;
  commands: MemoCommandService;
  /** The memos' latest space digests, for their tombstones. */
  spaces: FeedSpaces;
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
  const { js, keyring, commands, spaces, logger, metrics, retry } = options;
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
      // The reference id and the space attributes are sealed with the memo's key: erasing the memo erases them here too.
      const prepared = await Promise.all(
        batch.map(async ({ event }) => {
          const body: FeedEventBody | undefined = await feedEventOf(event, () => completesRevision(commands, event));
          if (!body) return undefined;
          const [sealed, space] = await Promise.all([sealFeedEvent(keyring, body), event.memo ? feedSpaceOf(keyring, event.memo) : undefined]);
          return { body, sealed, space };
        }),
      );
      // A tombstone is judged by the memo's last digests: from this batch, else as kept.
      const latest = new Map<string, string[]>();
      const erased = new Set<string>();
      const stored: (StoredFeedEvent | undefined)[] = [];
      for (const p of prepared) {
        if (!p) {
          stored.push(undefined);
          continue;
        }
        const key = FeedSpaces.key(p.body.project_id, p.body.memo_uuid);
        let extra: Pick<StoredFeedEvent, 'space_sealed' | 'space_digests'> = {};
        if (p.space) {
          latest.set(key, p.space.space_digests);
          erased.delete(key);
          extra = p.space;
        } else if (p.body.type === 'memo.deleted' || p.body.type === 'memo.expired') {
          const digests = latest.get(key) ?? (await spaces.get(key));
          if (digests) extra = { space_digests: digests };
          latest.delete(key);
          erased.add(key);
        }
        stored.push({ ...p.sealed, ...extra });
      }
      // Kept beside the publishes, not before them: the next batch (the earliest a later tombstone
      // can come in) starts only once both are done.
      const kept = Promise.all([...latest].map(([key, digests]) => spaces.put(key, digests)));
      // Sent back to back, acknowledged together: the stream stores them in this order.
      const acks = stored.map((body, i) =>
        body
          ? js.publish(Subjects.feed(body.project_id, body.type), encodeJson(body), { msgID: feedMessageId(batch[i]!.event.id) }).then(() => {
              published?.inc({ type: body.type });
            })
          : Promise.resolve(),
      );
      const [settled] = await Promise.all([Promise.allSettled(acks), kept]);
      // Dropped only once the tombstone is in the feed: a redelivered one finds them still.
      if (settled.every((s) => s.status === 'fulfilled')) {
        await Promise.all([...erased].map((key) => spaces.delete(key))).catch((error: unknown) => logger.warn({ err: error }, 'could not drop erased memos’ space digests'));
      }
      return settled.map((s) => (s.status === 'fulfilled' ? undefined : { error: s.reason }));
    },
  });
}
