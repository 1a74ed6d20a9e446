import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { eventStoreContract } from './contract';
import { SqliteEventStore } from './sqlite';

eventStoreContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memex-es-'));
  const store = new SqliteEventStore(join(dir, 'memo.db'));
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** A store on a new file (written as `options` say), closed and its directory removed after `run`. */
async function withStore(run: (store: SqliteEventStore, path: string) => Promise<void>, options: { compact?: boolean } = {}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'memex-es-'));
  const path = join(dir, 'memo.db');
  const store = new SqliteEventStore(path, options);
  try {
    await run(store, path);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('SQLite event rows at rest', () => {
  const sealedLike = { memoId: 'm-1', projectId: 'p-1', sealed: randomBytes(1500).toString('base64') };
  const subject = 'memex.evt.memo.p-1.m-1';

  it('keeps data deflated when that is smaller and no subject its data names, and reads both back whole', () =>
    withStore(async (store, path) => {
      const stream = 'memo-p-1-m-1';
      const event = { id: randomUUID(), type: 'MemoCreated', data: sealedLike, meta: { commandId: 'c-1', subject }, occurredAt: new Date().toISOString() };
      await store.appendToStream(stream, [event], { expectedVersion: 0 });
      const db = new Database(path, { readonly: true });
      const row = db.prepare('SELECT data, meta, subject FROM events WHERE stream = ?').get(stream) as { data: unknown; meta: string; subject: string };
      db.close();
      expect(Buffer.isBuffer(row.data)).toBe(true);
      expect((row.data as Buffer).byteLength).toBeLessThan(0.85 * JSON.stringify(sealedLike).length);
      expect(JSON.parse(row.meta)).toEqual({ commandId: 'c-1' });
      // The memo event subject of the data's ids: derived when read, not stored.
      expect(row.subject).toBe('');
      const [read] = (await store.readStream(stream)).events;
      expect(read!.data).toEqual(sealedLike);
      expect(read!.meta).toEqual({ commandId: 'c-1', subject });
      expect((await store.readUnpublished({ limit: 10 }))[0]!.meta).toEqual({ commandId: 'c-1', subject });
      expect((await store.readLog({ after: 0, limit: 10 }))[0]!.meta).toEqual({ commandId: 'c-1', subject });

      // Any other subject is kept as it is.
      const other = { id: randomUUID(), type: 'MemoCreated', data: sealedLike, meta: { subject: 'memex.evt.memo.p-2.m-1' }, occurredAt: new Date().toISOString() };
      await store.appendToStream('memo-p-2-m-1', [other], { expectedVersion: 0 });
      const db2 = new Database(path, { readonly: true });
      expect((db2.prepare('SELECT subject FROM events WHERE stream = ?').get('memo-p-2-m-1') as { subject: string }).subject).toBe('memex.evt.memo.p-2.m-1');
      db2.close();
      expect((await store.readStream('memo-p-2-m-1')).events[0]!.meta.subject).toBe('memex.evt.memo.p-2.m-1');
    }));

  it("keeps a sealed event's ids and box as bytes, anything else as (deflated) JSON, and reads every form back", () =>
    withStore(async (store, path) => {
      const [memoId, projectId] = [randomUUID(), randomUUID()];
      const box = randomBytes(901); // base64 ends in padding
      const datas = [
        { memoId, projectId, sealed: box.toString('base64') },
        // Not what SealedEventStore writes: an id that is no lowercase uuid, base64 not in its canonical form, another field.
        { memoId: memoId.toUpperCase(), projectId, sealed: box.toString('base64') },
        { memoId, projectId, sealed: box.toString('base64').replace(/=+$/, '') },
        { memoId, projectId, sealed: box.toString('base64'), extra: 1 },
      ];
      const events = datas.map((data) => ({ id: randomUUID(), type: 'MemoCreated', data, meta: {}, occurredAt: new Date().toISOString() }));
      await store.appendToStream('memo-data', events, { expectedVersion: 0 });
      expect((await store.readStream('memo-data')).events.map((e) => e.data)).toEqual(datas);
      const db = new Database(path, { readonly: true });
      const rows = db.prepare('SELECT data FROM events WHERE stream = ? ORDER BY version').all('memo-data') as { data: Buffer }[];
      db.close();
      expect(rows[0]!.data.byteLength).toBe(1 + 16 + 16 + box.byteLength);
      expect(rows[0]!.data.subarray(33).equals(box)).toBe(true);
      // The others are JSON (deflated: base64 shrinks a little), which never starts with the bytes form's flag.
      for (const row of rows.slice(1)) expect([row.data[0] === 0xfe, JSON.parse(inflateRawSync(row.data).toString()) as unknown]).toEqual([false, expect.any(Object)]);
    }));

  it('keeps a command id and a request id as 33 bytes, any other meta as JSON', () =>
    withStore(async (store, path) => {
      const metas = [
        { commandId: randomUUID(), requestId: randomUUID(), subject },
        { commandId: randomUUID(), subject },
        { requestId: randomUUID() },
        { commandId: randomUUID(), requestId: 'from-a-client-header' },
        { commandId: randomUUID().toUpperCase() },
      ];
      const events = metas.map((meta) => ({ id: randomUUID(), type: 'MemoArchived', data: sealedLike, meta, occurredAt: new Date().toISOString() }));
      await store.appendToStream('memo-meta', events, { expectedVersion: 0 });
      expect((await store.readStream('memo-meta')).events.map((e) => e.meta)).toEqual(metas);
      const db = new Database(path, { readonly: true });
      const rows = db.prepare('SELECT meta FROM events WHERE stream = ? ORDER BY version').all('memo-meta') as { meta: string | Buffer }[];
      db.close();
      expect(rows.map((r) => (Buffer.isBuffer(r.meta) ? r.meta.byteLength : 'json'))).toEqual([33, 17, 17, 'json', 'json']);
    }));

  it('keeps memo and reference stream names and uuid event ids as bytes, other names and ids as text', () =>
    withStore(async (store, path) => {
      const [projectId, memoId] = [randomUUID(), randomUUID()];
      const names = [`memo-${projectId}-${memoId}`, `memoref-${projectId}-${'ab'.repeat(32)}`, 'memo-p-1-m-1', `memo-${projectId.toUpperCase()}-${memoId}`];
      const ids = [randomUUID(), randomUUID(), 'e-not-a-uuid', randomUUID().toUpperCase()];
      for (const [i, name] of names.entries()) {
        await store.appendToStream(name, [{ id: ids[i]!, type: 'MemoCreated', data: sealedLike, meta: { subject }, occurredAt: new Date().toISOString() }], { expectedVersion: 0 });
      }
      const db = new Database(path, { readonly: true });
      const rows = db.prepare('SELECT id, stream FROM events ORDER BY position').all() as { id: string | Buffer; stream: string | Buffer }[];
      db.close();
      const form = (v: string | Buffer) => (Buffer.isBuffer(v) ? v.byteLength : v);
      expect(rows.map((r) => [form(r.stream), form(r.id)])).toEqual([
        [33, 16],
        [49, 16],
        ['memo-p-1-m-1', 'e-not-a-uuid'],
        [names[3], ids[3]],
      ]);
      for (const [i, name] of names.entries()) {
        const { events } = await store.readStream(name);
        expect(events.map((e) => [e.streamName, e.id])).toEqual([[name, ids[i]]]);
        expect((await store.readEvent(name, 1))?.id).toBe(ids[i]);
      }
      expect((await store.readLog({ after: 0, limit: 10 })).map((e) => e.streamName)).toEqual(names);
    }));

  it('goes on with a stream whose earlier rows hold its name and ids as text: reads, guards versions, publishes, erases', () =>
    withStore(async (store, path) => {
      const [projectId, memoId, oldId] = [randomUUID(), randomUUID(), randomUUID()];
      const stream = `memo-${projectId}-${memoId}`;
      const event = (type: string) => ({ id: randomUUID(), type, data: sealedLike, meta: { subject }, occurredAt: new Date().toISOString() });
      // An earlier version's row, written beside this store on the same file.
      const older = new SqliteEventStore(path, { compact: false });
      await older.appendToStream(stream, [{ ...event('MemoCreated'), id: oldId }], { expectedVersion: 0 });
      await older.close();
      await expect(store.appendToStream(stream, [event('MemoArchived')], { expectedVersion: 0 })).rejects.toThrow(/version/i);
      const appended = await store.appendToStream(stream, [event('MemoArchived')], { expectedVersion: 1 });
      expect(appended.nextVersion).toBe(2);
      const db = new Database(path, { readonly: true });
      const forms = db.prepare('SELECT typeof(stream) AS s, typeof(id) AS i FROM events ORDER BY version').all();
      db.close();
      expect(forms).toEqual([{ s: 'text', i: 'text' }, { s: 'blob', i: 'blob' }]);
      const read = await store.readStream(stream);
      expect([read.version, read.events.map((e) => [e.id, e.type])]).toEqual([2, [[oldId, 'MemoCreated'], [appended.events[0]!.id, 'MemoArchived']]]);
      expect((await store.readEvent(stream, 1))?.id).toBe(oldId);

      expect((await store.readUnpublished({ limit: 10 })).map((e) => e.id)).toEqual([oldId, appended.events[0]!.id]);
      await store.markPublished([oldId, appended.events[0]!.id]);
      expect(await store.readUnpublished({ limit: 10 })).toEqual([]);

      await store.eraseStream(stream, event('MemoDeleted'), { expectedVersion: 2 });
      expect((await store.readStream(stream)).events.map((e) => [e.version, e.type])).toEqual([[3, 'MemoDeleted']]);
    }));

  it('writes rows as earlier versions did with compact: false (for a rolling upgrade)', () =>
    withStore(async (store, path) => {
      const stream = 'memo-p-1-m-1';
      const event = { id: randomUUID(), type: 'MemoCreated', data: sealedLike, meta: { commandId: 'c-1', subject }, occurredAt: new Date().toISOString() };
      await store.appendToStream(stream, [event], { expectedVersion: 0 });
      const db = new Database(path, { readonly: true });
      const row = db.prepare('SELECT data, meta, subject FROM events WHERE stream = ?').get(stream) as { data: unknown; meta: string; subject: string };
      db.close();
      expect(row.data).toBe(JSON.stringify(sealedLike));
      expect(row.subject).toBe(subject);
      expect(JSON.parse(row.meta)).toEqual({ commandId: 'c-1', subject });
      expect((await store.readStream(stream)).events[0]!.data).toEqual(sealedLike);
    }, { compact: false }));

  it('reads rows an earlier version wrote: JSON text, the subject inside meta too', () =>
    withStore(async (store, path) => {
      const db = new Database(path);
      db.prepare(
        `INSERT INTO events (id, stream, version, type, data, meta, occurred_at, subject)
         VALUES ('e-1', 'memo-p-1-m-1', 1, 'MemoCreated', ?, ?, '2026-01-01T00:00:00.000Z', ?)`,
      ).run(JSON.stringify(sealedLike), JSON.stringify({ commandId: 'c-0', subject }), subject);
      db.close();
      const [read] = (await store.readStream('memo-p-1-m-1')).events;
      expect(read!.data).toEqual(sealedLike);
      expect(read!.meta).toEqual({ commandId: 'c-0', subject });
    }));
});
