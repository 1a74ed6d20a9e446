/**
 * kill -9 of the memo service between append and publish loses no event: the event is in the store,
 * unpublished; the restarted service publishes it (and brings the read model up to date) first thing.
 * A batch command's append is all of its items or none, and a retry of it applies none twice.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Streams, Subjects, packChunks, type Memo, type MemoGetRequest, type MemoView } from '@memex/contracts';
import { CommandClient, ContentStore, Keyring, NatsBlobStore, connectNats, decodeMemoEvent, query } from '@memex/runtime';
import { eventually, startNatsServer, tempDir, type NatsServerHandle } from '@memex/testing';
import { exited, spawnTs } from '../support/processes';

describe('memo outbox across a kill -9', () => {
  let nats: NatsServerHandle;
  let dir: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    nats = await startNatsServer();
    dir = tempDir();
  });
  afterAll(async () => {
    await nats?.stop();
    dir?.remove();
  });

  it('republishes on restart what was appended but never published', async () => {
    const env = { NATS_URL: nats.url, MEMEX_DATA_DIR: dir.path, LOG_LEVEL: 'warn' };
    const doomed = spawnTs('services/memo/src/main.ts', [], { ...env, MEMEX_FAILPOINTS: 'memo.after-append' });
    const nc = await connectNats({ url: nats.url, name: 'outbox-test' });
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const client = new CommandClient(nc);
    await eventually(async () => {
      try {
        return (await jsm.consumers.info(Streams.memoCommands, 'memo')).num_waiting > 0;
      } catch {
        return false;
      }
    }, 30_000);

    const projectId = randomUUID();
    const memoId = randomUUID();
    const ring = await Keyring.open(nc);
    await ring.create(projectId, memoId);
    const content = await new ContentStore(await NatsBlobStore.open(nc), ring).write(projectId, memoId, 'It lived.');
    const input = { title: 'Survivor', content, metadata: {}, referenceId: null, tags: [], source: null, type: 'text', expirationDate: null };
    const sent = client
      .send('create', { projectId, memoId, sealed: await ring.sealJson(projectId, memoId, input) }, { timeoutMs: 3_000 })
      .catch((e: unknown) => e);
    expect(await exited(doomed)).toBeNull(); // killed by SIGKILL: no exit code
    expect(doomed.signalCode).toBe('SIGKILL');
    expect(await sent).toMatchObject({ code: 'Timeout' });

    // The event is in the store (its only row: the stream name is kept as bytes) and not yet on the bus.
    const db = new Database(join(dir.path, 'memo', 'memo.db'), { readonly: true });
    const rows = db.prepare('SELECT type, published FROM events').all();
    db.close();
    expect(rows).toEqual([{ type: 'MemoCreated', published: 0 }]);
    const subject = Subjects.memoEvents(projectId, memoId);
    expect((await jsm.streams.info(Streams.memoEvents, { subjects_filter: subject })).state.subjects?.[subject] ?? 0).toBe(0);

    const revived = spawnTs('services/memo/src/main.ts', [], env);
    try {
      const stream = await js.streams.get(Streams.memoEvents);
      const message = await eventually(async () => (await stream.getMessage({ last_by_subj: subject })) ?? undefined, 30_000);
      expect(decodeMemoEvent(message.data, message.header)).toMatchObject({ type: 'MemoCreated', data: { memoId } });
      const memo = await eventually(
        () => query<MemoGetRequest, Memo>(nc, Subjects.query.memoGet, { projectId, ref: { idType: 'memo_uuid', id: memoId } }).catch(() => undefined),
        10_000,
      );
      expect(memo.title).toBe('Survivor');
    } finally {
      client.close();
      ring.close();
      await nc.close();
      revived.kill('SIGTERM');
      await exited(revived);
    }
  }, 90_000);
  it('keeps a batch command\'s items, all appended before the kill, and applies none twice on a retry', async () => {
    const batchDir = tempDir();
    const env = { NATS_URL: nats.url, MEMEX_DATA_DIR: batchDir.path, LOG_LEVEL: 'warn' };
    const doomed = spawnTs('services/memo/src/main.ts', [], { ...env, MEMEX_FAILPOINTS: 'memo.after-batch-append' });
    const nc = await connectNats({ url: nats.url, name: 'outbox-batch-test' });
    const client = new CommandClient(nc);
    const ring = await Keyring.open(nc);
    const content = new ContentStore(await NatsBlobStore.open(nc), ring);
    const projectId = randomUUID();
    try {
      const memoIds = [randomUUID(), randomUUID(), randomUUID()];
      for (const memoId of memoIds) {
        await ring.create(projectId, memoId);
        const ref = await content.write(projectId, memoId, 'Tide tables.');
        const input = { title: 'Tides', content: ref, metadata: {}, referenceId: null, tags: [], source: null, type: 'text', expirationDate: null };
        const sealed = await ring.sealJson(projectId, memoId, input);
        await eventually(() => client.send('create', { projectId, memoId, sealed }, { timeoutMs: 3_000 }).catch(() => undefined), 30_000);
      }
      const items = await Promise.all(
        memoIds.map(async (memoId) => ({ projectId, memoId, revision: 1, model: 'm', chunks: packChunks([{ start: 0, end: 12 }]), sealed: await ring.sealJson(projectId, memoId, { firstChunk: 'Tide tables.' }) })),
      );
      const commandId = randomUUID();
      const sent = client.send('record-chunks-batch', { items }, { commandId, timeoutMs: 3_000 }).catch((e: unknown) => e);
      expect(await exited(doomed)).toBeNull();
      expect(doomed.signalCode).toBe('SIGKILL');
      expect(await sent).toMatchObject({ code: 'Timeout' });
      // Every item's event is in the store, unpublished: the append was one write.
      const db = new Database(join(batchDir.path, 'memo', 'memo.db'), { readonly: true });
      const rows = db.prepare("SELECT type, published FROM events WHERE type = 'MemoChunked'").all();
      db.close();
      expect(rows).toEqual(memoIds.map(() => ({ type: 'MemoChunked', published: 0 })));

      const revived = spawnTs('services/memo/src/main.ts', [], env);
      try {
        // The caller retries the same command: nothing is applied twice.
        const again = await eventually(() => client.send('record-chunks-batch', { items }, { commandId, timeoutMs: 3_000 }).catch(() => undefined), 30_000);
        expect(again.result.results).toEqual(memoIds.map(() => ({ ok: true, applied: false })));
        for (const memoId of memoIds) {
          const memo = await eventually(
            () => query<MemoGetRequest, MemoView>(nc, Subjects.query.memoGet, { projectId, ref: { idType: 'memo_uuid', id: memoId } }).catch(() => undefined),
            10_000,
          );
          expect(memo.chunk_layout.count).toBe(1);
        }
        const after = new Database(join(batchDir.path, 'memo', 'memo.db'), { readonly: true });
        const chunked = after.prepare("SELECT published FROM events WHERE type = 'MemoChunked'").all();
        after.close();
        // One event per memo, and the restarted service published them before taking new commands.
        expect(chunked).toEqual(memoIds.map(() => ({ published: 1 })));
      } finally {
        revived.kill('SIGTERM');
        await exited(revived);
      }
    } finally {
      client.close();
      ring.close();
      await nc.close();
      batchDir.remove();
    }
  }, 90_000);
});
