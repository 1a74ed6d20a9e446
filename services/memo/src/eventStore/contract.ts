/**
 * The event store contract: every adapter runs this suite (SQLite always; MongoDB when reachable).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VersionConflictError, type EventStore, type NewEvent } from './port';

interface EventStoreFixture {
  store: EventStore;
  dispose(): Promise<void>;
}

const event = (type: string, data: unknown = {}, subject?: string): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  meta: { commandId: 'c-1', ...(subject ? { subject } : {}) },
  occurredAt: new Date().toISOString(),
});

export function eventStoreContract(name: string, setup: () => Promise<EventStoreFixture>): void {
  describe(`event store contract: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;
    const stream = () => `memo-test-${randomUUID()}`;

    beforeAll(async () => {
      fixture = await setup();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.dispose();
    });

    it('reads an unknown stream as empty at version 0', async () => {
      expect(await store.readStream(stream())).toEqual({ version: 0, events: [] });
    });

    it('appends to a new stream at expected version 0 and reads the events back in order', async () => {
      const s = stream();
      const data = { title: 'Grüße', nested: { list: [1, 'two', null] } };
      const result = await store.appendToStream(s, [event('MemoCreated', data), event('MemoArchived')], { expectedVersion: 0 });
      expect(result.nextVersion).toBe(2);
      const read = await store.readStream(s);
      expect(read.version).toBe(2);
      expect(read.events.map((e) => [e.type, e.version, e.streamName])).toEqual([
        ['MemoCreated', 1, s],
        ['MemoArchived', 2, s],
      ]);
      expect(read.events[0]?.data).toEqual(data);
      expect(read.events[0]?.meta.commandId).toBe('c-1');
      expect(read.events[1]!.position).toBeGreaterThan(read.events[0]!.position);
    });

    it('reads one event by its version', async () => {
      const s = stream();
      await store.appendToStream(s, [event('A', { n: 1 })], { expectedVersion: 0 });
      await store.appendToStream(s, [event('B', { n: 2 }), event('C', { n: 3 })], { expectedVersion: 1 });
      for (const [version, type] of [[1, 'A'], [2, 'B'], [3, 'C']] as const) {
        const read = await store.readEvent(s, version);
        expect([read?.type, read?.version, read?.data, read?.streamName]).toEqual([type, version, { n: version }, s]);
      }
      expect(await store.readEvent(s, 4)).toBeUndefined();
      expect(await store.readEvent(stream(), 1)).toBeUndefined();
    });

    it('continues a stream at its current version', async () => {
      const s = stream();
      await store.appendToStream(s, [event('A')], { expectedVersion: 0 });
      const r = await store.appendToStream(s, [event('B')], { expectedVersion: 1 });
      expect(r.events[0]?.version).toBe(2);
    });

    it('rejects a stale expected version with VersionConflictError and writes nothing', async () => {
      const s = stream();
      await store.appendToStream(s, [event('A')], { expectedVersion: 0 });
      await expect(store.appendToStream(s, [event('B'), event('C')], { expectedVersion: 0 })).rejects.toBeInstanceOf(VersionConflictError);
      await expect(store.appendToStream(s, [event('B')], { expectedVersion: 5 })).rejects.toBeInstanceOf(VersionConflictError);
      expect((await store.readStream(s)).events.map((e) => e.type)).toEqual(['A']);
    });

    it('lets exactly one of many concurrent appends at the same version win', async () => {
      const s = stream();
      await store.appendToStream(s, [event('A')], { expectedVersion: 0 });
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store.appendToStream(s, [event(`B${i}`), event(`C${i}`)], { expectedVersion: 1 })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflictError);
      const read = await store.readStream(s);
      expect(read.version).toBe(3);
      // The winner's two events, both of them, and nobody else's.
      expect(read.events[1]!.type.slice(1)).toBe(read.events[2]!.type.slice(1));
    });

    it('keeps streams apart', async () => {
      const a = stream();
      const b = stream();
      await store.appendToStream(a, [event('A')], { expectedVersion: 0 });
      await store.appendToStream(b, [event('B')], { expectedVersion: 0 });
      expect((await store.readStream(a)).events.map((e) => e.type)).toEqual(['A']);
      expect((await store.readStream(b)).events.map((e) => e.type)).toEqual(['B']);
    });

    it('erases a stream down to a tombstone, under the same version guard', async () => {
      const s = stream();
      const secret = `secret-${randomUUID()}`;
      await store.appendToStream(s, [event('MemoCreated', { content: secret }, 'memex.evt.x'), event('MemoChunked', { content: secret })], {
        expectedVersion: 0,
      });
      await expect(store.eraseStream(s, event('MemoDeleted'), { expectedVersion: 1 })).rejects.toBeInstanceOf(VersionConflictError);
      const erased = await store.eraseStream(s, event('MemoDeleted', { gone: true }, 'memex.evt.x'), { expectedVersion: 2 });
      expect(erased.nextVersion).toBe(3);
      const read = await store.readStream(s);
      expect(read.version).toBe(3);
      expect(read.events.map((e) => e.type)).toEqual(['MemoDeleted']);
      expect(JSON.stringify(read.events)).not.toContain(secret);
      expect(await store.readEvent(s, 1)).toBeUndefined();
      expect((await store.readEvent(s, 3))?.type).toBe('MemoDeleted');
      const unpublished = await store.readUnpublished({ limit: 10_000 });
      expect(JSON.stringify(unpublished)).not.toContain(secret);
    });

    it('is an outbox: events with a subject stay unpublished until marked, oldest first', async () => {
      const s = stream();
      const first = event('A', {}, 'memex.evt.a');
      const internal = event('Internal');
      const second = event('B', {}, 'memex.evt.a');
      await store.appendToStream(s, [first, internal, second], { expectedVersion: 0 });
      let pending = (await store.readUnpublished({ limit: 10_000 })).filter((e) => e.streamName === s);
      expect(pending.map((e) => e.id)).toEqual([first.id, second.id]);
      expect(pending[0]?.meta.subject).toBe('memex.evt.a');
      await store.markPublished([first.id]);
      pending = (await store.readUnpublished({ limit: 10_000 })).filter((e) => e.streamName === s);
      expect(pending.map((e) => e.id)).toEqual([second.id]);
      await store.markPublished([second.id, second.id]);
      pending = (await store.readUnpublished({ limit: 10_000 })).filter((e) => e.streamName === s);
      expect(pending).toEqual([]);
    });

    it('skips fresh events when asked only for older ones', async () => {
      const s = stream();
      const old = { ...event('Old', {}, 'memex.evt.b'), occurredAt: '2000-01-01T00:00:00.000Z' };
      const fresh = event('Fresh', {}, 'memex.evt.b');
      await store.appendToStream(s, [old, fresh], { expectedVersion: 0 });
      const pending = (await store.readUnpublished({ limit: 10_000, olderThan: '2001-01-01T00:00:00.000Z' })).filter(
        (e) => e.streamName === s,
      );
      expect(pending.map((e) => e.id)).toEqual([old.id]);
      await store.markPublished([old.id, fresh.id]);
    });

    it('serves its log for replays: every event with a subject, published or not, by position, in pages', async () => {
      const head = await store.headPosition();
      const a = stream();
      const b = stream();
      const secret = `secret-${randomUUID()}`;
      const a1 = event('A1', { n: 1 }, 'memex.evt.a');
      const internal = event('Internal');
      const a2 = event('A2', { n: 2 }, 'memex.evt.a');
      await store.appendToStream(a, [a1, internal, a2], { expectedVersion: 0 });
      const gone = event('MemoCreated', { content: secret }, 'memex.evt.b');
      await store.appendToStream(b, [gone], { expectedVersion: 0 });
      const a3 = event('A3', {}, 'memex.evt.a');
      await store.appendToStream(a, [a3], { expectedVersion: 3 });
      await store.markPublished([a1.id]);
      const tombstone = event('MemoDeleted', { gone: true }, 'memex.evt.b');
      await store.eraseStream(b, tombstone, { expectedVersion: 1 });
      expect(await store.headPosition()).toBeGreaterThan(head);

      // Pages of one event: the cursor may fall inside a commit of several.
      const paged: string[] = [];
      for (let after = head; ; ) {
        const page = await store.readLog({ after, limit: 1 });
        if (page.length === 0) break;
        expect(page).toHaveLength(1);
        paged.push(page[0]!.id);
        after = page[0]!.position;
      }
      expect(paged).toEqual([a1.id, a2.id, a3.id, tombstone.id]);
      const whole = await store.readLog({ after: head, limit: 100 });
      expect(whole.map((e) => [e.type, e.streamName, e.version])).toEqual([
        ['A1', a, 1],
        ['A2', a, 3],
        ['A3', a, 4],
        ['MemoDeleted', b, 2],
      ]);
      expect(whole[0]?.data).toEqual({ n: 1 });
      expect(whole[0]?.meta.subject).toBe('memex.evt.a');
      expect(JSON.stringify(whole)).not.toContain(secret);
      expect(await store.readLog({ after: await store.headPosition(), limit: 100 })).toEqual([]);
      await store.markPublished([a2.id, a3.id, tombstone.id]);
    });

    it('appends to many streams at once, each at its own version, in one position order', async () => {
      const [a, b, c] = [stream(), stream(), stream()];
      await store.appendToStream(b, [event('B0')], { expectedVersion: 0 });
      const results = await store.appendMany([
        { streamName: a, events: [event('A1', { n: 1 }, 'memex.evt.a'), event('A2', { n: 2 })], expectedVersion: 0 },
        { streamName: b, events: [event('B1', {}, 'memex.evt.b')], expectedVersion: 1 },
        { streamName: c, events: [event('C1', {}, 'memex.evt.c')], expectedVersion: 0 },
      ]);
      expect(results.map((r) => [r.nextVersion, r.events.map((e) => [e.type, e.streamName, e.version])])).toEqual([
        [2, [['A1', a, 1], ['A2', a, 2]]],
        [2, [['B1', b, 2]]],
        [1, [['C1', c, 1]]],
      ]);
      const positions = results.flatMap((r) => r.events.map((e) => e.position));
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect(new Set(positions).size).toBe(positions.length);
      expect((await store.readStream(a)).events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
      expect((await store.readStream(b)).events.map((e) => e.type)).toEqual(['B0', 'B1']);
      const pending = (await store.readUnpublished({ limit: 10_000 })).filter((e) => [a, b, c].includes(e.streamName));
      expect(pending.map((e) => e.type)).toEqual(['A1', 'B1', 'C1']);
      await store.markPublished(pending.map((e) => e.id));
    });

    it('writes none of a batch when one stream of it is stale (atomic), and takes it whole once decided again', async () => {
      const [a, b, c] = [stream(), stream(), stream()];
      await store.appendToStream(b, [event('B0')], { expectedVersion: 0 });
      const head = await store.headPosition();
      const batch = (bVersion: number) => [
        { streamName: a, events: [event('A1')], expectedVersion: 0 },
        { streamName: b, events: [event('B1')], expectedVersion: bVersion },
        { streamName: c, events: [event('C1')], expectedVersion: 0 },
      ];
      const refused = await store.appendMany(batch(0)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(VersionConflictError);
      expect((refused as VersionConflictError).streamName).toBe(b);
      for (const s of [a, c]) expect(await store.readStream(s)).toEqual({ version: 0, events: [] });
      expect((await store.readStream(b)).events.map((e) => e.type)).toEqual(['B0']);
      expect((await store.readLog({ after: head, limit: 100 })).filter((e) => [a, b, c].includes(e.streamName))).toEqual([]);
      await store.appendMany(batch(1));
      for (const [s, types] of [[a, ['A1']], [b, ['B0', 'B1']], [c, ['C1']]] as const) {
        expect((await store.readStream(s)).events.map((e) => e.type)).toEqual(types);
      }
    });

    it('lets exactly one of two racing batches over a shared stream win, whole', async () => {
      const shared = stream();
      const [x, y] = [stream(), stream()];
      const results = await Promise.allSettled([
        store.appendMany([{ streamName: x, events: [event('X')], expectedVersion: 0 }, { streamName: shared, events: [event('S-x')], expectedVersion: 0 }]),
        store.appendMany([{ streamName: y, events: [event('Y')], expectedVersion: 0 }, { streamName: shared, events: [event('S-y')], expectedVersion: 0 }]),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflictError);
      const winner = (await store.readStream(shared)).events.map((e) => e.type);
      expect(winner).toHaveLength(1);
      const xWon = winner[0] === 'S-x';
      expect((await store.readStream(x)).version).toBe(xWon ? 1 : 0);
      expect((await store.readStream(y)).version).toBe(xWon ? 0 : 1);
    });

    it('refuses a second event with an id it already holds', async () => {
      const e = event('A');
      await store.appendToStream(stream(), [e], { expectedVersion: 0 });
      await expect(store.appendToStream(stream(), [e], { expectedVersion: 0 })).rejects.toThrow();
    });
  });
}
