import type { MemoAttributes, SealedEventBody } from '@memex/contracts';
import type { Keyring } from '@memex/runtime';
import type { AppendResult, EventStore, NewEvent, ReadStreamResult, StoredEvent } from './port';

/** How a sealed event sits in the store: ids in the clear, everything else in `sealed`. */
interface SealedData {
  memoId: string;
  projectId: string;
  sealed: string;
}

const isSealed = (data: unknown): data is SealedData =>
  typeof data === 'object' && data !== null && typeof (data as { sealed?: unknown }).sealed === 'string';

/**
 * Seals memo events with the memo's data key before the wrapped store sees them: `data` and
 * `meta.memo` (title, metadata, tags, reference id, summary, chunk text…) become one AES-GCM box
 * under `data.sealed`; only ids, types, versions and times stay readable. Tombstones (`MemoDeleted`)
 * and events of other streams (reference claims name only ids) pass as they are. Reads open what
 * they return; the outbox publishes the stored (sealed) form as it is, so the bus never sees
 * plaintext either. Shredding the key erases every copy at once: store rows, bus messages, backups.
 */
export class SealedEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly keyring: Keyring,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  private async seal(event: NewEvent): Promise<NewEvent> {
    if (event.type === 'MemoDeleted' || !event.meta.subject) return event;
    const { memoId, projectId } = event.data as { memoId: string; projectId: string };
    const body: SealedEventBody = { data: event.data, memo: event.meta.memo ?? null };
    const sealed = await this.keyring.sealJson(projectId, memoId, body);
    const { memo: _memo, ...meta } = event.meta;
    return { ...event, data: { memoId, projectId, sealed } satisfies SealedData, meta };
  }

  private async open(event: StoredEvent): Promise<StoredEvent> {
    if (!isSealed(event.data)) return event;
    const body = await this.keyring.openJson<SealedEventBody>(event.data.projectId, event.data.memoId, event.data.sealed);
    return { ...event, data: body.data, meta: { ...event.meta, memo: body.memo as MemoAttributes | null } };
  }

  async readStream(streamName: string): Promise<ReadStreamResult> {
    const read = await this.inner.readStream(streamName);
    return { version: read.version, events: await Promise.all(read.events.map((e) => this.open(e))) };
  }

  /** Returns the events as stored (sealed), ready for the outbox. */
  async appendToStream(streamName: string, events: readonly NewEvent[], options: { expectedVersion: number }): Promise<AppendResult> {
    return this.inner.appendToStream(streamName, await Promise.all(events.map((e) => this.seal(e))), options);
  }

  async eraseStream(streamName: string, tombstone: NewEvent, options: { expectedVersion: number }): Promise<AppendResult> {
    return this.inner.eraseStream(streamName, await this.seal(tombstone), options);
  }

  /** As stored (sealed). */
  readUnpublished(options: { limit: number; olderThan?: string }): Promise<StoredEvent[]> {
    return this.inner.readUnpublished(options);
  }

  markPublished(eventIds: readonly string[]): Promise<void> {
    return this.inner.markPublished(eventIds);
  }

  readLog(options: { after: number; limit: number }): Promise<StoredEvent[]> {
    return this.inner.readLog(options);
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
