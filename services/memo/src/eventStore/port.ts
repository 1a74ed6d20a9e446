import type { MemoAttributes } from '@memex/contracts';

/** Facts about an event that are not the event: who caused it, and where the outbox sends it. */
export interface EventMeta {
  commandId?: string;
  requestId?: string;
  /** W3C trace context of the command that caused the event, so the outbox publishes the event in its trace. */
  traceparent?: string;
  tracestate?: string;
  /** The memo's filterable attributes after this event; travels with the published message. */
  memo?: MemoAttributes | null;
  /** The bus subject the outbox publishes to; events without one are internal and never published. */
  subject?: string;
}

export interface NewEvent {
  /** Unique; also the `Nats-Msg-Id` when published. */
  id: string;
  type: string;
  data: unknown;
  meta: EventMeta;
  occurredAt: string;
}

export interface StoredEvent extends NewEvent {
  streamName: string;
  /** 1 for the first event of a stream, +1 per event. */
  version: number;
  /** Orders events of the whole store; increases with every append. */
  position: number;
}

export interface ReadStreamResult {
  /** The version of the last event, 0 for a stream with none. */
  version: number;
  events: StoredEvent[];
}

/** One stream's part of an `appendMany`. */
export interface StreamAppend {
  streamName: string;
  events: readonly NewEvent[];
  expectedVersion: number;
}

export interface AppendResult {
  nextVersion: number;
  events: StoredEvent[];
}

/** Someone appended to the stream since the caller read it. Re-read, decide again, retry. */
export class VersionConflictError extends Error {
  constructor(
    readonly streamName: string,
    readonly expectedVersion: number,
    options?: { cause?: unknown },
  ) {
    super(`Version conflict on ${streamName}: expected version ${expectedVersion}`, options);
    this.name = 'VersionConflictError';
  }
}

/**
 * The memo service's source of truth. Appends are atomic (all events of one call or none) and
 * guarded by `expectedVersion`. The store is also the outbox: every event with a `meta.subject` stays
 * "unpublished" until `markPublished`.
 */
export interface EventStore {
  readonly kind: 'sqlite' | 'mongodb';
  readStream(streamName: string): Promise<ReadStreamResult>;
  /** One event of a stream by its version; undefined if there is none (an erased stream keeps only its tombstone). */
  readEvent(streamName: string, version: number): Promise<StoredEvent | undefined>;
  /** Throws `VersionConflictError` unless the stream's version equals `expectedVersion` (0: new stream). */
  appendToStream(streamName: string, events: readonly NewEvent[], options: { expectedVersion: number }): Promise<AppendResult>;
  /**
   * Appends to several distinct streams in one transaction: every stream's events or none of them.
   * Each stream has its own version guard; one stale guard fails the whole call with
   * `VersionConflictError` (naming that stream) and writes nothing. Results are in `appends` order.
   */
  appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]>;
  /**
   * Erasure: atomically replaces every event of the stream with `tombstone` (given the next version),
   * so no earlier event, and none of its data, can be read again. Same version guard as append.
   */
  eraseStream(streamName: string, tombstone: NewEvent, options: { expectedVersion: number }): Promise<AppendResult>;
  /** Events with a subject not yet marked published, by position; `olderThan` (ISO) skips fresh ones. */
  readUnpublished(options: { limit: number; olderThan?: string }): Promise<StoredEvent[]>;
  markPublished(eventIds: readonly string[]): Promise<void>;
  /**
   * The log for replays (re-indexing): events with a subject, published or not, by position after
   * `after`, at most `limit`. An erased memo shows its tombstone only.
   */
  readLog(options: { after: number; limit: number }): Promise<StoredEvent[]>;
  /** The highest position handed out so far (0 for an empty store): how far a replay has to go. */
  headPosition(): Promise<number>;
  close(): Promise<void>;
}
