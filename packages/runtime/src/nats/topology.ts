import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { Consumers, Streams, Subjects, type ConsumerName } from '@memex/contracts';
import type { Logger } from '../logger';

const MINUTE = 60_000;

export interface TopologyOptions {
  /** JetStream replicas per stream: 1 on one server, 3 in a cluster. */
  replicas?: number;
  retry?: RetryOverrides;
  /** Told when a stream keeps an older definition the server will not change (see `ensureTopology`). */
  logger?: Pick<Logger, 'warn'>;
}

/** Operator overrides of the retry policy (MEMEX_RETRY_LIMIT, MEMEX_RETRY_BACKOFF_MS). */
export interface RetryOverrides {
  /** Deliveries of a message before it is dead-lettered, for every consumer. */
  maxDeliver?: number | undefined;
  /** The first redelivery delay; each further one doubles, up to 30 s. */
  backoffBaseMs?: number | undefined;
}

export interface ConsumerPolicy {
  maxDeliver: number;
  ackWaitMs: number;
  maxAckPending: number;
  backoffBaseMs: number;
}

/** A consumer's policy with the operator's overrides applied. */
export function consumerPolicy(name: ConsumerName, retry: RetryOverrides = {}): ConsumerPolicy {
  const base = CONSUMER_POLICY[name];
  return { ...base, maxDeliver: retry.maxDeliver ?? base.maxDeliver, backoffBaseMs: retry.backoffBaseMs ?? 500 };
}

/**
 * How each durable consumer retries: deliveries before the dead-letter path, and how long a message
 * may stay unacknowledged. Handlers send `working()` every third of `ackWaitMs`, so a long task is
 * never redelivered while its process lives; when the process dies, another instance takes the
 * message after at most `ackWaitMs`.
 */
export const CONSUMER_POLICY: Record<ConsumerName, { maxDeliver: number; ackWaitMs: number; maxAckPending: number }> = {
  [Consumers.memoCommands]: { maxDeliver: 5, ackWaitMs: 10_000, maxAckPending: 512 },
  [Consumers.indexer]: { maxDeliver: 8, ackWaitMs: 15_000, maxAckPending: 256 },
  [Consumers.indexerCatalog]: { maxDeliver: 10, ackWaitMs: 10_000, maxAckPending: 1024 },
  [Consumers.agent]: { maxDeliver: 8, ackWaitMs: 15_000, maxAckPending: 256 },
  // A file that cannot be read is recorded as the memo's error, not retried; retries are for outages.
  [Consumers.extractor]: { maxDeliver: 5, ackWaitMs: 30_000, maxAckPending: 64 },
  // The public feed's projector: quick work, in batches; retries are for outages.
  [Consumers.feed]: { maxDeliver: 10, ackWaitMs: 10_000, maxAckPending: 1024 },
  // A re-summary the model cannot give keeps the memo's summary as it is; retries are for outages.
  [Consumers.resummarize]: { maxDeliver: 5, ackWaitMs: 15_000, maxAckPending: 64 },
};

function streamConfigs(replicas: number): (Partial<StreamConfig> & { name: string })[] {
  return [
    {
      name: Streams.memoCommands,
      subjects: [Subjects.memoCommandsAll],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      duplicate_window: nanos(2 * MINUTE),
      // A command nobody took within an hour is stale: its caller gave up long ago.
      max_age: nanos(60 * MINUTE),
      discard: DiscardPolicy.Old,
    },
    {
      name: Streams.memoEvents,
      subjects: [Subjects.memoEventsAll],
      // A message goes once every durable consumer has acknowledged it: the log lives in the memo
      // service's event store, which replays read (Subjects.query.memoLog), so the bus keeps no copy.
      retention: RetentionPolicy.Interest,
      storage: StorageType.File,
      num_replicas: replicas,
      duplicate_window: nanos(2 * MINUTE),
      max_age: 0,
      max_msgs: -1,
      max_bytes: -1,
    },
    {
      name: Streams.summaryJobs,
      subjects: [Subjects.summaryJobsAll],
      // A job is gone once the agent has taken it: what is left is what is still to do.
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      duplicate_window: nanos(2 * MINUTE),
      max_age: nanos(7 * 24 * 60 * MINUTE),
      discard: DiscardPolicy.Old,
    },
    {
      name: Streams.deadLetters,
      subjects: [Subjects.deadLettersAll],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: replicas,
      max_age: nanos(30 * 24 * 60 * MINUTE),
    },
  ];
}

function consumerConfigs(retry: RetryOverrides): { stream: string; config: Partial<ConsumerConfig> }[] {
  const pull = (name: ConsumerName, stream: string, filter: string): { stream: string; config: Partial<ConsumerConfig> } => {
    const policy = consumerPolicy(name, retry);
    return {
      stream,
      config: {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: filter,
        ack_wait: nanos(policy.ackWaitMs),
        max_deliver: policy.maxDeliver,
        max_ack_pending: policy.maxAckPending,
      },
    };
  };
  return [
    pull(Consumers.memoCommands, Streams.memoCommands, Subjects.memoCommandsAll),
    pull(Consumers.indexer, Streams.memoEvents, Subjects.memoEventsAll),
    pull(Consumers.indexerCatalog, Streams.memoEvents, Subjects.memoEventsAll),
    pull(Consumers.agent, Streams.memoEvents, Subjects.memoEventsAll),
    pull(Consumers.extractor, Streams.memoEvents, Subjects.memoEventsAll),
    pull(Consumers.feed, Streams.memoEvents, Subjects.memoEventsAll),
    pull(Consumers.resummarize, Streams.summaryJobs, Subjects.summaryJobsAll),
  ];
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(String(e?.message));
}

/**
 * Creates or updates every stream and durable consumer Memex uses. Idempotent; every service calls
 * it at start so any one of them can come up first.
 */
export async function ensureTopology(jsm: JetStreamManager, { replicas = 1, retry = {}, logger }: TopologyOptions = {}): Promise<void> {
  for (const config of streamConfigs(replicas)) {
    let existing: StreamConfig;
    try {
      existing = (await jsm.streams.info(config.name)).config;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await jsm.streams.add(config);
      continue;
    }
    try {
      await jsm.streams.update(config.name, config);
    } catch (error) {
      // NATS before 2.10 cannot change a stream's retention: a stream made by an older Memex keeps
      // limits retention (and its copy of the log) there; everything else is brought up to date.
      if (config.retention === existing.retention || !/retention/i.test(String((error as Error)?.message))) throw error;
      const kept: Partial<StreamConfig> = { ...config, retention: existing.retention };
      await jsm.streams.update(config.name, kept);
      logger?.warn(
        { stream: config.name, retention: existing.retention, wanted: config.retention },
        'this NATS server cannot change the stream\'s retention; it keeps its old one (NATS ≥ 2.10 changes it, see docs/operations.md)',
      );
    }
  }
  for (const { stream, config } of consumerConfigs(retry)) {
    try {
      await jsm.consumers.info(stream, config.durable_name as string);
      await jsm.consumers.update(stream, config.durable_name as string, config);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await jsm.consumers.add(stream, config);
    }
  }
}
