import type { MemoAttributes, SealedEventBody } from '@memex/contracts';
import { SEAL_FOR_TRANSIT, type Keyring } from '@memex/runtime';
import type { AppendResult, EventStore, NewEvent, ReadStreamResult, StoredEvent, StreamAppend } from './port';

/** How a sealed event sits in the store: ids in the clear, everything else in `sealed`. */
interface SealedData {
  memoId: string;
  projectId: string;
  sealed: string;
}

const isSealed = (data: unknown): data is SealedData =>
  typeof data === 'object' && data !== null && typeof (data as { sealed?: unknown }).sealed === 'string';

/** The attribute snapshot after each of a stream's events (opened, in version order). */
type AttributesAfterEach = (events: readonly StoredEvent[]) => (MemoAttributes | null)[];

/**
 * What a row's box keeps of an event's data (`lean`), and the data whole again from that and the
 * row's clear ids (`whole`). `whole` must take data written whole (older rows) as it is.
 */
export interface RowData {
  lean(type: string, data: Record<string, unknown>): Record<string, unknown>;
  whole(type: string, lean: Record<string, unknown>, ids: { memoId: string; projectId: string }): Record<string, unknown>;
}

interface SealedEventStoreOptions {
  /**
   * How a stream's events give the attribute snapshot each goes out with: rows keep only `data`,
   * and the log and the outbox's sweep fold the stream to seal the snapshot back in.
   */
  attributesAfterEach: AttributesAfterEach;
  rowData: RowData;
  /**
   * Rows in the form the version before reads (see formats.ts): data whole, with the snapshot, since
   * its sweep publishes rows as they are.
   */
  olderRows?: boolean;
}

/**
 * Seals memo events with the memo's data key before the wrapped store sees them: `data` and
 * `meta.memo` (title, metadata, tags, reference id, summary, chunk text…) become one AES-GCM box
 * under `data.sealed`; only ids, types, versions and times stay readable. Tombstones (`MemoDeleted`)
 * and events of other streams (reference claims name only ids) pass as they are. Reads open what
 * they return; the outbox publishes the sealed form, so the bus never sees plaintext either.
 * Shredding the key erases every copy at once: store rows, bus messages, backups.
 *
 * A row's box holds `data` only, and of that only what nothing else gives back (`RowData`: not the
 * ids the row shows in the clear, not ids derived from others): `meta.memo`, the attribute
 * snapshot, follows from the stream's earlier events, so it is sealed into the form that goes out
 * (what an append returns, what `readUnpublished` and `readLog` give) and not kept at rest for
 * every event.
 */
export class SealedEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly keyring: Keyring,
    private readonly options: SealedEventStoreOptions,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  private static sealable(event: NewEvent): boolean {
    return event.type !== 'MemoDeleted' && Boolean(event.meta.subject);
  }

  /** `asRow`: the row's form (lean data, no snapshot); else the form that goes out (data whole, the snapshot). */
  private async seal<E extends NewEvent>(event: E, { asRow }: { asRow: boolean }): Promise<E> {
    if (!SealedEventStore.sealable(event)) return event;
    const { memoId, projectId } = event.data as { memoId: string; projectId: string };
    const body: SealedEventBody = asRow
      ? { data: this.options.rowData.lean(event.type, event.data as Record<string, unknown>) }
      : { data: event.data, memo: event.meta.memo ?? null };
    // What goes out is sealed for transit: each event is sealed twice (row, message), and deflating
    // the second would double that CPU for nothing lasting.
    const sealed = await this.keyring.sealJson(projectId, memoId, body, asRow ? {} : SEAL_FOR_TRANSIT);
    const { memo: _memo, ...meta } = event.meta;
    return { ...event, data: { memoId, projectId, sealed } satisfies SealedData, meta };
  }

  /** A row's `meta.memo` stays undefined when its box holds no snapshot. */
  private async open(event: StoredEvent): Promise<StoredEvent> {
    if (!isSealed(event.data)) return event;
    const { memoId, projectId, sealed } = event.data;
    const body = await this.keyring.openJson<SealedEventBody>(projectId, memoId, sealed);
    const meta = body.memo === undefined ? event.meta : { ...event.meta, memo: body.memo };
    return { ...event, data: this.options.rowData.whole(event.type, body.data as Record<string, unknown>, { memoId, projectId }), meta };
  }

  /**
   * Rows as they go out: each sealed event whose box lacks its snapshot is sealed again with the
   * one its stream's fold gives. An event whose stream was erased since it was read is left out
   * (its key is gone; the tombstone tells consumers).
   */
  private async goingOut(rows: StoredEvent[]): Promise<StoredEvent[]> {
    const wanted = new Set(rows.filter((e) => isSealed(e.data)).map((e) => e.id));
    const streams = [...new Set(rows.filter((e) => wanted.has(e.id)).map((e) => e.streamName))];
    // By event id: the form to send, or null for a row that holds its snapshot (an older row).
    const ready = new Map<string, StoredEvent | null>();
    await Promise.all(
      streams.map(async (streamName) => {
        const { events } = await this.readStream(streamName);
        const attributes = this.options.attributesAfterEach(events);
        await Promise.all(
          events.map(async (event, i) => {
            if (!wanted.has(event.id)) return;
            const sealed = event.meta.memo === undefined ? await this.seal({ ...event, meta: { ...event.meta, memo: attributes[i] ?? null } }, { asRow: false }) : null;
            ready.set(event.id, sealed);
          }),
        );
      }),
    );
    return rows.flatMap((row) => {
      if (!isSealed(row.data)) return [row];
      const sealed = ready.get(row.id);
      return sealed === undefined ? [] : [sealed ?? row];
    });
  }

  async readStream(streamName: string): Promise<ReadStreamResult> {
    const read = await this.inner.readStream(streamName);
    return { version: read.version, events: await Promise.all(read.events.map((e) => this.open(e))) };
  }

  async readEvent(streamName: string, version: number): Promise<StoredEvent | undefined> {
    const event = await this.inner.readEvent(streamName, version);
    return event && this.open(event);
  }

  /** Returns the events as they go out (sealed, with their snapshots), ready for the outbox. */
  async appendToStream(streamName: string, events: readonly NewEvent[], options: { expectedVersion: number }): Promise<AppendResult> {
    const [appended] = await this.appendMany([{ streamName, events, expectedVersion: options.expectedVersion }]);
    return appended!;
  }

  /** Each memo's events sealed under its own key; returned as they go out, as `appendToStream` does. */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const older = this.options.olderRows === true;
    const rows = await Promise.all(
      appends.map(async (a) => ({ ...a, events: await Promise.all(a.events.map((e) => this.seal(e, { asRow: !older }))) })),
    );
    const appended = appends.length === 1 ? [await this.inner.appendToStream(rows[0]!.streamName, rows[0]!.events, rows[0]!)] : await this.inner.appendMany(rows);
    if (older) return appended;
    const byId = new Map(appends.flatMap((a) => a.events.map((e) => [e.id, e] as const)));
    return Promise.all(
      appended.map(async (result) => ({
        nextVersion: result.nextVersion,
        events: await Promise.all(
          result.events.map((row) => {
            const event = byId.get(row.id);
            return event && SealedEventStore.sealable(event) ? this.seal({ ...row, data: event.data, meta: event.meta }, { asRow: false }) : row;
          }),
        ),
      })),
    );
  }

  async eraseStream(streamName: string, tombstone: NewEvent, options: { expectedVersion: number }): Promise<AppendResult> {
    return this.inner.eraseStream(streamName, await this.seal(tombstone, { asRow: false }), options);
  }

  /** As they go out (sealed, with their snapshots). */
  async readUnpublished(options: { limit: number; olderThan?: string }): Promise<StoredEvent[]> {
    return this.goingOut(await this.inner.readUnpublished(options));
  }

  markPublished(eventIds: readonly string[]): Promise<void> {
    return this.inner.markPublished(eventIds);
  }

  /** As they go out (sealed, with their snapshots). */
  async readLog(options: { after: number; limit: number }): Promise<StoredEvent[]> {
    return this.goingOut(await this.inner.readLog(options));
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
