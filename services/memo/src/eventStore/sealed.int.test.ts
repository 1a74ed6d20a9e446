import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subjects, type SealedEventBody } from '@memex/contracts';
import { Keyring, connectNats } from '@memex/runtime';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { decide, initialState, type MemoState } from '../memo/decider';
import { toNewEvents } from '../memo/handlers';
import { rowData } from '../memo/rows';
import { memoStream } from '../memo/streams';
import { attributesAfterEach } from '../memo/view';
import { VersionConflictError, type NewEvent, type StoredEvent } from './port';
import { SealedEventStore } from './sealed';
import { SqliteEventStore } from './sqlite';

describe('sealed event store: the attribute snapshot', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let keyring: Keyring;
  let dir: string;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'sealed-store' });
    keyring = await Keyring.open(nc);
    dir = mkdtempSync(join(tmpdir(), 'memex-sealed-'));
  });
  afterAll(async () => {
    keyring?.close();
    await nc?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A created memo, then its summary: two events, each with the snapshot after it, as the handlers make them. */
  async function memoEvents(): Promise<{ projectId: string; memoId: string; stream: string; events: NewEvent[] }> {
    const [projectId, memoId] = [randomUUID(), randomUUID()];
    await keyring.create(projectId, memoId);
    const now = new Date().toISOString();
    let state: MemoState = initialState();
    const events: NewEvent[] = [];
    for (const command of [
      {
        type: 'CreateMemo' as const,
        memoId,
        projectId,
        now,
        input: {
          title: 'Fog signals',
          content: { inline: 'Horns and bells along the coast.', length: 32, digest: 'd' },
          metadata: { shelf: 3 },
          referenceId: null,
          tags: ['coast'],
          source: null,
          type: 'text',
          expirationDate: null,
        },
      },
      { type: 'RecordSummary' as const, projectId, revision: 1, summary: 'About fog horns.', tags: ['fog', 'sound'], now },
    ]) {
      const made = toNewEvents(decide(command, state), state, { commandId: randomUUID(), subject: Subjects.memoEvents(projectId, memoId) }, now);
      events.push(...made.events);
      state = made.next;
    }
    return { projectId, memoId, stream: memoStream(projectId, memoId), events };
  }

  const body = (event: StoredEvent) => {
    const { projectId, memoId, sealed } = event.data as { projectId: string; memoId: string; sealed: string };
    return keyring.openJson<SealedEventBody>(projectId, memoId, sealed);
  };

  it('keeps rows without the snapshot and seals the folded one into every form that goes out', async () => {
    const inner = new SqliteEventStore(join(dir, 'lean.db'));
    const store = new SealedEventStore(inner, keyring, { attributesAfterEach, rowData });
    const { stream, events } = await memoEvents();
    const snapshots = events.map((e) => e.meta.memo);
    expect(snapshots[1]).toMatchObject({ title: 'Fog signals', summary: 'About fog horns.', tags: ['coast', 'fog', 'sound'] });

    const appended = await store.appendToStream(stream, events, { expectedVersion: 0 });
    // At rest: the box holds the event's data and nothing else, less what the row gives back: the
    // ids it shows in the clear, the tags' ids (derived from the memo's id and the tag).
    const rows = (await inner.readStream(stream)).events;
    const [createdRow, summarizedRow] = await Promise.all(rows.map(body));
    expect(Object.keys(createdRow!)).toEqual(['data']);
    const { memoId: _m, projectId: _p, ...created } = events[0]!.data as Record<string, unknown>;
    expect(createdRow!.data).toEqual({ ...created, tags: ['coast'] });
    expect(summarizedRow).toEqual({ data: { revision: 1, summary: 'About fog horns.', tags: ['fog', 'sound'], at: expect.any(String) } });
    // Reads give the data whole.
    expect((await store.readStream(stream)).events.map((e) => e.data)).toEqual(events.map((e) => e.data));
    expect((await store.readEvent(stream, 2))?.data).toEqual(events[1]!.data);
    // What the append returns (the outbox publishes it), the sweep and the log: data and snapshot.
    const unpublished = await store.readUnpublished({ limit: 10 });
    const log = await store.readLog({ after: 0, limit: 10 });
    for (const form of [appended.events, unpublished, log]) {
      expect(form.map((e) => e.id)).toEqual(events.map((e) => e.id));
      expect(await Promise.all(form.map(body))).toEqual(events.map((e, i) => ({ data: e.data, memo: snapshots[i] })));
    }
    // Reads open rows as they are (no snapshot to hand back).
    expect((await store.readStream(stream)).events.map((e) => e.meta.memo)).toEqual([undefined, undefined]);

    // Once the memo is erased its events are not in the log; the tombstone is.
    await store.eraseStream(
      stream,
      { id: randomUUID(), type: 'MemoDeleted', data: { ...(events[0]!.data as object), at: new Date().toISOString() }, occurredAt: new Date().toISOString(), meta: { subject: events[0]!.meta.subject! } },
      { expectedVersion: 2 },
    );
    expect((await store.readLog({ after: 0, limit: 10 })).map((e) => e.type)).toEqual(['MemoDeleted']);
    await store.close();
  });

  it('seals each stream of a batch append under its own memo\'s key, rows lean and what goes out whole', async () => {
    const inner = new SqliteEventStore(join(dir, 'batch.db'));
    const store = new SealedEventStore(inner, keyring, { attributesAfterEach, rowData });
    const memos = [await memoEvents(), await memoEvents()];
    const appended = await store.appendToStreams(memos.map(({ stream, events }) => ({ streamName: stream, events, expectedVersion: 0 })));
    for (const [i, { projectId, memoId, stream, events }] of memos.entries()) {
      const out = appended[i]!;
      if (out instanceof VersionConflictError) throw out;
      expect(out.events.map((e) => e.streamName)).toEqual([stream, stream]);
      expect(await Promise.all(out.events.map(body))).toEqual(events.map((e) => ({ data: e.data, memo: e.meta.memo })));
      const rows = (await inner.readStream(stream)).events;
      for (const row of rows) expect(row.data).toMatchObject({ projectId, memoId });
      expect(Object.keys((await body(rows[0]!))!)).toEqual(['data']);
      // Under this memo's key only: the other memo's key does not open it.
      const other = memos[1 - i]!;
      const { sealed } = rows[0]!.data as { sealed: string };
      await expect(keyring.openJson(other.projectId, other.memoId, sealed)).rejects.toThrow();
    }
    await store.close();
  });

  it('keeps data whole and the snapshot at rest for a rolling upgrade, and sends rows that hold one as they are', async () => {
    const inner = new SqliteEventStore(join(dir, 'upgrade.db'));
    const older = new SealedEventStore(inner, keyring, { attributesAfterEach, rowData, olderRows: true });
    const { stream, events } = await memoEvents();
    const appended = await older.appendToStream(stream, events, { expectedVersion: 0 });
    const rows = (await inner.readStream(stream)).events;
    expect(await Promise.all(rows.map(body))).toEqual(events.map((e) => ({ data: e.data, memo: e.meta.memo })));
    expect(appended.events.map((e) => e.data)).toEqual(rows.map((e) => e.data));

    // A lean store reading those rows (after the upgrade) sends the very boxes that are stored.
    const lean = new SealedEventStore(inner, keyring, { attributesAfterEach, rowData });
    expect((await lean.readLog({ after: 0, limit: 10 })).map((e) => e.data)).toEqual(rows.map((e) => e.data));
    expect((await lean.readUnpublished({ limit: 10 })).map((e) => e.data)).toEqual(rows.map((e) => e.data));
    expect((await lean.readStream(stream)).events.map((e) => e.meta.memo)).toEqual(events.map((e) => e.meta.memo));
    expect((await lean.readStream(stream)).events.map((e) => e.data)).toEqual(events.map((e) => e.data));
    await lean.close();
  });
});
