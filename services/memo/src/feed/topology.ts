import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { Streams, Subjects } from '@memex/contracts';

/** Delivery attempts kept per webhook for its deliveries listing. */
export const DELIVERIES_KEPT = 200;

function isNotFound(error: unknown): boolean {
  const e = error as { message?: unknown; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10059 || /not found/i.test(String(e?.message));
}

/**
 * The feed stream (limits retention: every event kept for `retentionMs`, whoever has read it) and
 * the webhook deliveries stream. Made by the memo service, the feed's only writer; readers treat a
 * missing stream as an empty feed.
 */
export async function ensureFeedStreams(jsm: JetStreamManager, options: { retentionMs: number; replicas: number }): Promise<void> {
  const configs: (Partial<StreamConfig> & { name: string })[] = [
    {
      name: Streams.feed,
      subjects: [Subjects.feedAll],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: options.replicas,
      max_age: nanos(options.retentionMs),
      // A redelivered memo event publishes again under the same id: dropped within this window.
      duplicate_window: nanos(Math.min(options.retentionMs, 10 * 60_000)),
      discard: DiscardPolicy.Old,
    },
    {
      name: Streams.webhookDeliveries,
      subjects: [Subjects.webhookDeliveriesAll],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: options.replicas,
      max_msgs_per_subject: DELIVERIES_KEPT,
      max_age: nanos(30 * 24 * 3_600_000),
      discard: DiscardPolicy.Old,
    },
  ];
  for (const config of configs) {
    try {
      await jsm.streams.info(config.name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await jsm.streams.add(config);
      continue;
    }
    await jsm.streams.update(config.name, config);
  }
}
