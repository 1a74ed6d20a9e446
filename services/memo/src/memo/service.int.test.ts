import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  INLINE_CONTENT_MAX_BYTES,
  Streams,
  Subjects,
  packChunks,
  type CreateMemoInput,
  type MemoGetRequest,
  type MemoView,
  type TitleSearchRequest,
  type UpdateMemoInput,
} from '@memex/contracts';
import { CommandClient, ContentStore, Keyring, NatsBlobStore, connectNats, decodeMemoEvent, decompressText, query, silentLogger } from '@memex/runtime';
import { eventually, startNatsServer, tempDir, type NatsServerHandle } from '@memex/testing';
import { loadMemoConfig } from '../config';
import { startMemoService, type MemoService } from '../service';

const input = (over: Partial<CreateMemoInput> = {}): CreateMemoInput => ({
  title: 'Quarterly report',
  content: 'Revenue grew. Costs fell.',
  metadata: { team: 'finance' },
  referenceId: null,
  tags: ['q3'],
  source: 'drive',
  type: 'text',
  expirationDate: null,
  ...over,
});

describe('memo service over NATS', () => {
  let nats: NatsServerHandle;
  let dir: ReturnType<typeof tempDir>;
  let service: MemoService;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let client: CommandClient;
  let ring: Keyring;
  let content: ContentStore;
  const projectId = randomUUID();
  const otherProject = randomUUID();

  beforeAll(async () => {
    nats = await startNatsServer();
    dir = tempDir();
    const config = loadMemoConfig({ NATS_URL: nats.url, MEMEX_DATA_DIR: dir.path, LOG_LEVEL: 'silent' });
    service = await startMemoService(config, { logger: silentLogger() });
    nc = await connectNats({ url: nats.url, name: 'test' });
    jsm = await jetstreamManager(nc);
    client = new CommandClient(nc);
    ring = await Keyring.open(nc);
    content = new ContentStore(await NatsBlobStore.open(nc), ring);
  });

  afterAll(async () => {
    client?.close();
    ring?.close();
    await nc?.close();
    await service?.stop();
    await nats?.stop();
    dir?.remove();
  });

  const get = (id: string, idType: 'memo_uuid' | 'reference_id' = 'memo_uuid', project = projectId) =>
    query<MemoGetRequest, MemoView>(nc, Subjects.query.memoGet, { projectId: project, ref: { idType, id } });
  const text = async (view: MemoView, project = projectId) => content.read(project, view.uuid, view.content_ref);

  // What the gateway does: content to a sealed blob, the command's fields sealed with the memo's key.
  const create = async (over: Partial<CreateMemoInput> = {}, project = projectId) => {
    const memoId = randomUUID();
    const given = input(over);
    await ring.create(project, memoId);
    const ref = await content.write(project, memoId, given.content);
    const out = await client.send('create', { projectId: project, memoId, sealed: await ring.sealJson(project, memoId, { ...given, content: ref }) });
    return { memoId, ...out };
  };
  const update = async (memoId: string, given: UpdateMemoInput, project = projectId) => {
    const { content: newText, ...fields } = given;
    const ref = newText === undefined ? undefined : await content.write(project, memoId, newText);
    return client.send('update', { projectId: project, memoId, sealed: await ring.sealJson(project, memoId, { ...fields, ...(ref ? { content: ref } : {}) }) });
  };
  const summarize = async (memoId: string, revision: number, summary: string, tags: string[]) =>
    client.send('record-summary', { projectId, memoId, revision, sealed: await ring.sealJson(projectId, memoId, { summary, tags }) });

  it('creates a memo that GET finds at once, pending, by uuid and by reference id', async () => {
    const { memoId, eventSeq } = await create({ referenceId: 'ext-1' });
    expect(eventSeq).toBeGreaterThan(0);
    const memo = await get(memoId);
    expect(memo).toMatchObject({
      uuid: memoId,
      title: 'Quarterly report',
      pending: true,
      summary: '',
      chunk_layout: { count: 0 },
      client_reference_id: 'ext-1',
      content_length: 'Revenue grew. Costs fell.'.length,
      tags: [{ tag: 'q3' }],
      archived: false,
    });
    expect((await get('ext-1', 'reference_id')).uuid).toBe(memoId);
    expect(await text(memo)).toBe('Revenue grew. Costs fell.');
  });

  it('hides another project\'s memo on GET and refuses to change it', async () => {
    const { memoId } = await create({}, otherProject);
    await expect(get(memoId)).rejects.toMatchObject({ code: 'MemoNotFound' });
    await expect(client.send('update', { projectId, memoId, sealed: 'not for this project' })).rejects.toMatchObject({
      code: 'ResourceNotInProject',
    });
    await expect(client.send('delete', { projectId, memoId })).rejects.toMatchObject({
      code: 'ResourceNotInProject',
    });
    await expect(get(randomUUID())).rejects.toMatchObject({ code: 'MemoNotFound' });
    await expect(get('not-a-uuid')).rejects.toMatchObject({ code: 'MemoNotFound' });
  });

  it('keeps reference ids unique per project, even when created at the same time', async () => {
    const ref = `dup-${randomUUID()}`;
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => create({ referenceId: ref })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'ReferenceIdTaken' });
    // Another project may use the same reference id.
    await expect(create({ referenceId: ref }, otherProject)).resolves.toBeDefined();
  });

  it('loses no update when many PATCHes of one memo race', async () => {
    const { memoId } = await create({ metadata: {} });
    await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? update(memoId, { title: `title ${i}` }) : update(memoId, { content: `content number ${i}` }))));
    const memo = await get(memoId);
    // Six content changes after creation: revision 7; the stream holds every one of them.
    const { state, events } = await service.commands.load(projectId, memoId);
    expect(state.status === 'active' && state.memo.revision).toBe(7);
    expect(events.filter((e) => e.type === 'MemoContentChanged')).toHaveLength(6);
    expect(events.filter((e) => e.type === 'MemoUpdated')).toHaveLength(6);
    expect(memo.title).toMatch(/^title \d+$/);
    expect(memo.pending).toBe(true);
  });

  it('PATCH with content drops summary, tags and chunks and starts a new revision', async () => {
    const { memoId } = await create();
    await client.send('record-chunks', {
      projectId,
      memoId,
      revision: 1,
      model: 'm',
      chunks: packChunks([{ start: 0, end: 13 }]),
      sealed: await ring.sealJson(projectId, memoId, { firstChunk: 'Revenue grew.' }),
    });
    await summarize(memoId, 1, 'Revenue grew.', ['revenue']);
    let memo = await get(memoId);
    expect(memo.pending).toBe(false);
    expect(memo.tags.map((t) => t.tag)).toEqual(['q3', 'revenue']);

    await update(memoId, { source: 'mail' });
    memo = await get(memoId);
    expect(memo).toMatchObject({ pending: false, source: 'mail', summary: 'Revenue grew.' });

    await update(memoId, { content: 'New text.' });
    memo = await get(memoId);
    expect(memo).toMatchObject({ pending: true, summary: '', tags: [], chunk_layout: { count: 0 }, content_length: 9 });
    expect(await text(memo)).toBe('New text.');

    // Late results for revision 1 are dropped.
    const late = await summarize(memoId, 1, 'old', ['old']);
    expect(late.result.applied).toBe(false);
    expect((await get(memoId)).summary).toBe('');
  });

  const chunksItem = async (memoId: string, revision: number, firstChunk: string, project = projectId) => ({
    projectId: project,
    memoId,
    revision,
    model: 'm',
    chunks: packChunks([{ start: 0, end: firstChunk.length }]),
    sealed: await ring.sealJson(project, memoId, { firstChunk }),
  });
  const summaryItem = async (memoId: string, revision: number, summary: string, tags: string[]) => ({
    projectId,
    memoId,
    revision,
    sealed: await ring.sealJson(projectId, memoId, { summary, tags, source: 'model' as const }),
  });
  const eventTypes = async (memoId: string) => (await service.commands.load(projectId, memoId)).events.map((e) => e.type);

  it('records the chunks of a batch of memos in one command: per item applied, stale or refused, in order', async () => {
    const [a, b, stale] = await Promise.all([create(), create(), create()]);
    await update(stale.memoId, { content: 'A second revision.' });
    const erased = randomUUID();
    await ring.create(projectId, erased);
    const erasedItem = await chunksItem(erased, 1, 'gone');
    await ring.shred(projectId, erased);
    const items = [await chunksItem(a.memoId, 1, 'Revenue grew.'), await chunksItem(stale.memoId, 1, 'Revenue grew.'), erasedItem, await chunksItem(b.memoId, 1, 'Revenue grew.')];
    const commandId = randomUUID();
    const sent = await client.send('record-chunks-batch', { items }, { commandId });
    expect(sent.result.results).toEqual([
      { ok: true, applied: true },
      { ok: true, applied: false },
      { ok: false, error: expect.objectContaining({ code: 'MemoNotFound' }) },
      { ok: true, applied: true },
    ]);
    expect(sent.eventSeq).toBeGreaterThan(0);
    for (const id of [a.memoId, b.memoId]) expect((await get(id)).chunk_layout.count).toBe(1);
    // The same command again (a redelivery) applies nothing twice.
    const again = await client.send('record-chunks-batch', { items }, { commandId });
    expect(again.result.results.map((r) => r.ok && r.applied)).toEqual([false, false, false, false]);
    for (const id of [a.memoId, b.memoId]) expect(await eventTypes(id)).toEqual(['MemoCreated', 'MemoChunked']);
    expect(await eventTypes(stale.memoId)).toEqual(['MemoCreated', 'MemoContentChanged']);
  });

  it('records summaries of a batch in one command, two revisions of one memo among them, each once', async () => {
    const { memoId } = await create();
    await update(memoId, { content: 'Revenue grew again.' });
    const other = await create();
    const sent = await client.send('record-summary-batch', {
      items: [await summaryItem(memoId, 1, 'Old.', ['old']), await summaryItem(memoId, 2, 'Grew again.', ['growth']), await summaryItem(other.memoId, 1, 'Grew.', ['revenue'])],
    });
    expect(sent.result.results).toEqual([
      { ok: true, applied: false },
      { ok: true, applied: true },
      { ok: true, applied: true },
    ]);
    expect(await get(memoId)).toMatchObject({ summary: 'Grew again.' });
    expect((await get(memoId)).tags.map((t) => t.tag)).toEqual(['growth']);
    expect(await get(other.memoId)).toMatchObject({ summary: 'Grew.' });
    expect((await eventTypes(memoId)).filter((t) => t === 'MemoSummarized')).toHaveLength(1);
    // Two items of one memo in one batch are two commands: both apply, one after the other.
    const { memoId: twice } = await create();
    await client.send('record-chunks-batch', { items: [await chunksItem(twice, 1, 'Revenue grew.')] });
    const both = await client.send('record-summary-batch', { items: [await summaryItem(twice, 1, 'First.', []), { ...(await summaryItem(twice, 1, 'Replaced.', [])), replace: true }] });
    expect(both.result.results).toEqual([
      { ok: true, applied: true },
      { ok: true, applied: true },
    ]);
    expect(await get(twice)).toMatchObject({ summary: 'Replaced.', pending: false });
  });

  it('keeps every command, event and reply of a 16 MiB memo with ~21k chunks under max_payload', async () => {
    const big = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.floor((16 * 1024 * 1024) / 57));
    const { memoId } = await create({ content: big });
    const chunks = Array.from({ length: Math.ceil(big.length / 800) }, (_, i) => ({ start: i * 800, end: Math.min(big.length, i * 800 + 900) }));
    expect(chunks.length).toBeGreaterThan(20_000);
    const layout = packChunks(chunks);
    const command = { projectId, memoId, revision: 1, model: 'm', chunks: layout, sealed: await ring.sealJson(projectId, memoId, { firstChunk: big.slice(0, 900) }) };
    const maxPayload = nc.info!.max_payload;
    expect(JSON.stringify(command).length).toBeLessThan(maxPayload / 2);
    await client.send('record-chunks', command);
    await summarize(memoId, 1, 'Lorem.', []);
    const view = await get(memoId);
    expect(view).toMatchObject({ pending: false, content_length: big.length, chunk_layout: { count: chunks.length } });
    expect(JSON.stringify(view).length).toBeLessThan(maxPayload / 2);
    expect((await text(view)) === big).toBe(true);
    // The bus copy of MemoChunked, sealed, fits as well (it was published: the command succeeded).
    const subject = Subjects.memoEvents(projectId, memoId);
    const info = await jsm.streams.info(Streams.memoEvents, { subjects_filter: subject });
    // MemoCreated, MemoChunked, and MemoSummarized with its tags
    expect(info.state.subjects?.[subject]).toBe(3);
  }, 60_000);

  it('DELETE erases the memo: read model, event stream down to a tombstone, bus messages purged', async () => {
    const secret = `secret-${randomUUID()}`;
    // Above the inline limit, so the content lives in a blob the delete must remove.
    const filler = ' harbour'.repeat(INLINE_CONTENT_MAX_BYTES / 8 + 100);
    const { memoId } = await create({ content: `${secret}${filler}`, referenceId: `del-${secret}` });
    await update(memoId, { content: `${secret} v2${filler}` });
    const before = await get(memoId);
    expect(before.content_ref.blob).toBeDefined();
    await client.send('delete', { projectId, memoId });
    await expect(get(memoId)).rejects.toMatchObject({ code: 'MemoNotFound' });
    const { events } = await service.commands.load(projectId, memoId);
    expect(events.map((e) => e.type)).toEqual(['MemoDeleted']);
    expect(JSON.stringify(events)).not.toContain(secret);

    const subject = Subjects.memoEvents(projectId, memoId);
    const info = await jsm.streams.info(Streams.memoEvents, { subjects_filter: subject });
    expect(info.state.subjects?.[subject]).toBe(1);
    const last = await (await jetstream(nc).streams.get(Streams.memoEvents)).getMessage({ last_by_subj: subject });
    expect(decodeMemoEvent(last!.data, last!.header).type).toBe('MemoDeleted');
    expect(new TextDecoder().decode(last!.data)).not.toContain(secret);
    // The content blob is gone, and the key with it.
    expect(await content.blobs.exists(before.content_ref.blob!.name)).toBe(false);
    await expect(ring.has(projectId, memoId)).resolves.toBe(false);

    await expect(client.send('delete', { projectId, memoId })).rejects.toMatchObject({
      code: 'MemoNotFound',
    });
    // The reference id is free again.
    await expect(create({ referenceId: `del-${secret}` })).resolves.toBeDefined();
  });

  it('keeps inline content once: the read model points at the event that holds it, GET and title search read it there', async () => {
    const stored = (memoId: string) => {
      const db = new Database(join(dir.path, 'memo', 'memo.db'), { readonly: true });
      try {
        const row = db.prepare('SELECT doc FROM memos WHERE memo_id = ?').get(memoId) as { doc: string | Buffer };
        return JSON.parse(decompressText(row.doc)) as MemoView;
      } finally {
        db.close();
      }
    };
    const p = randomUUID();
    const { memoId } = await create({ title: 'Once only', content: 'Lighthouses. Fog horns sound.' }, p);
    expect(stored(memoId).content_ref).toEqual({ length: 29, digest: '', event: 1 });
    const memo = await get(memoId, 'memo_uuid', p);
    const { events } = await service.commands.load(p, memoId);
    expect(memo.content_ref).toEqual((events[0]!.data as { content: unknown }).content);
    expect(memo.content_ref).toEqual({ inline: expect.any(String), length: 29, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await text(memo, p)).toBe('Lighthouses. Fog horns sound.');

    // A new revision (version 3, after a title change): the record follows it.
    await update(memoId, { title: 'Still once' }, p);
    await update(memoId, { content: 'Bells. Whistles, too.' }, p);
    expect(stored(memoId).content_ref).toMatchObject({ event: 3, length: 21 });
    await client.send('record-chunks', {
      projectId: p,
      memoId,
      revision: 2,
      model: 'm',
      chunks: packChunks([{ start: 0, end: 6 }, { start: 7, end: 21 }]),
      sealed: await ring.sealJson(p, memoId, { firstChunk: '' }),
    });
    expect(stored(memoId).content_ref).toMatchObject({ event: 3 });
    expect(await text(await get(memoId, 'memo_uuid', p), p)).toBe('Bells. Whistles, too.');
    const [hit] = await query<TitleSearchRequest, { chunk_content: string | null }[]>(nc, Subjects.query.memoTitleSearch, {
      projectId: p,
      mode: 'startswith',
      query: 'still',
      filters: [],
      limit: 10,
    });
    expect(hit?.chunk_content).toBe('Bells.');

    // Content over the inline limit lives in the blob store, and the record keeps its reference.
    const big = await create({ content: 'x'.repeat(INLINE_CONTENT_MAX_BYTES + 1) }, p);
    expect(stored(big.memoId).content_ref).toMatchObject({ blob: expect.any(Object) });
    expect(stored(big.memoId).content_ref.event).toBeUndefined();
  });

  it('keeps the inline content references GETs read (sealed), reads a new revision\'s anew, and drops them when any key is shredded', async () => {
    const p = randomUUID();
    const { store } = (service.commands as unknown as { deps: { store: { readEvent: (...args: unknown[]) => Promise<unknown> } } }).deps;
    const readEvent = store.readEvent.bind(store);
    let eventReads = 0;
    store.readEvent = (...args: unknown[]) => {
      eventReads += 1;
      return readEvent(...args);
    };
    try {
      const { memoId } = await create({ title: 'Kept', content: 'Tides turn twice a day.' }, p);
      const first = await get(memoId, 'memo_uuid', p);
      const reads = eventReads;
      expect(service.commands.contentRefsHeld).toBeGreaterThan(0);
      const again = await get(memoId, 'memo_uuid', p);
      expect(eventReads).toBe(reads);
      expect(again.content_ref).toEqual(first.content_ref);
      expect(await text(again, p)).toBe('Tides turn twice a day.');
      // A new revision is held by another event: read, not served from what was kept.
      await update(memoId, { content: 'Neap tides are small.' }, p);
      expect(await text(await get(memoId, 'memo_uuid', p), p)).toBe('Neap tides are small.');
      expect(eventReads).toBe(reads + 1);
      // Any shred (here another memo's delete) empties what was kept.
      const other = await create({ content: 'To be deleted.' }, p);
      await client.send('delete', { projectId: p, memoId: other.memoId });
      await eventually(() => service.commands.contentRefsHeld === 0);
      expect(await text(await get(memoId, 'memo_uuid', p), p)).toBe('Neap tides are small.');
      expect(eventReads).toBe(reads + 2);
    } finally {
      store.readEvent = readEvent;
    }
  });

  it('searches titles with filters, skipping expired (erased) memos', async () => {
    const p = randomUUID();
    await create({ title: 'Beta plan', source: 'slack' }, p);
    await create({ title: 'alpha plan', source: 'drive' }, p);
    const gamma = await create({ title: 'Plan gamma', source: 'slack', expirationDate: '2001-01-01T00:00:00.000Z' }, p);
    await eventuallyGone(gamma.memoId, p);
    const search = (req: Partial<TitleSearchRequest>) =>
      query<TitleSearchRequest, { memo_title: string; distance: null }[]>(nc, Subjects.query.memoTitleSearch, {
        projectId: p,
        mode: 'contains',
        query: 'plan',
        filters: [],
        limit: 10,
        ...req,
      });
    expect((await search({})).map((r) => r.memo_title)).toEqual(['alpha plan', 'Beta plan']);
    expect((await search({ mode: 'startswith', query: 'BETA' })).map((r) => r.memo_title)).toEqual(['Beta plan']);
    expect(
      (await search({ filters: [{ field: 'source', operator: 'eq', value: 'slack', filter_type: 'native_field' }] })).map((r) => r.memo_title),
    ).toEqual(['Beta plan']);
    expect((await search({}))[0]?.distance).toBeNull();
  });

  const eventuallyGone = async (memoId: string, project = projectId) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const gone = await get(memoId, 'memo_uuid', project).then(
        () => false,
        (error: { code?: string }) => error.code === 'MemoNotFound',
      );
      if (gone) return;
      if (Date.now() > deadline) throw new Error('memo was not erased');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('erases a memo when its expiration date passes, as DELETE does (tombstone reason expired)', async () => {
    const soon = new Date(Date.now() + 400).toISOString();
    const { memoId } = await create({ expirationDate: soon });
    expect((await get(memoId)).archived).toBe(false);
    await eventuallyGone(memoId);
    const { events } = await service.commands.load(projectId, memoId);
    expect(events.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([['MemoDeleted', 'expired']]);
    // The key goes once the tombstone is published (just after the read model forgets the memo).
    const deadline = Date.now() + 5_000;
    while (await ring.has(projectId, memoId)) {
      if (Date.now() > deadline) throw new Error('key not shredded');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
