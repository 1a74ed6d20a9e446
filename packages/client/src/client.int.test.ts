/**
 * The SDK against a running stack: every service in this process over a private nats-server, the
 * gateway listening on a real socket (plain HTTP on loopback; TLS is the gateway's concern, tested
 * in test/e2e), called through the global fetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { startStack, type Stack } from '../../../test/support/stack';
import { MemexApiError, MemexClient, type StreamEvent } from './index';

describe('@memex/client against a running stack', () => {
  let stack: Stack;
  let client: MemexClient;
  let baseUrl: string;

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '1000' } });
    baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
    const { key } = await stack.project('sdk');
    client = new MemexClient({ baseUrl, apiKey: key });
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const processed = (id: string) => eventually(async () => ((await client.getMemo(id)).pending ? undefined : true), 20_000);

  it('creates once per idempotency key, reads, updates and deletes a memo', async () => {
    const body = { title: 'Harbour logistics', content: 'Container ships unload at the cranes. Trucks carry containers inland.', reference_id: 'sdk-1', tags: ['ops'] };
    const first = await client.createMemo(body, { idempotencyKey: 'sdk-create-1' });
    const again = await client.createMemo(body, { idempotencyKey: 'sdk-create-1' });
    expect(again.memo_uuid).toBe(first.memo_uuid);
    const byRef = await client.getMemo('sdk-1', { idType: 'reference_id' });
    expect(byRef).toMatchObject({ uuid: first.memo_uuid, title: 'Harbour logistics' });
    await processed(first.memo_uuid);
    await expect(client.updateMemo(first.memo_uuid, { title: 'Port logistics' })).resolves.toEqual({ ok: true });
    expect((await client.getMemo(first.memo_uuid)).title).toBe('Port logistics');
    await client.deleteMemo('sdk-1', { idType: 'reference_id' });
    const gone = await client.getMemo(first.memo_uuid).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(MemexApiError);
    expect(gone).toMatchObject({ status: 404, message: 'Memo not found' });
  });

  it('creates many memos through the batch route: per-item results in order, once per idempotency key', async () => {
    const memos = [
      { title: 'Tides', content: 'Tides rise twice a day.', reference_id: 'sdk-bulk-1' },
      { title: '', content: 'No title.' },
      { title: 'Currents', content: 'Currents carry warm water north.' },
      { title: 'Tides again', content: 'Same reference id.', reference_id: 'sdk-bulk-1' },
      { title: 'Waves', content: 'Waves break on the reef.' },
    ];
    const first = await client.createMemos(memos, { batchSize: 2, idempotencyKey: 'sdk-bulk' });
    expect(first.map((r) => (r.ok ? 'ok' : r.status))).toEqual(['ok', 400, 'ok', 409, 'ok']);
    expect(first[3]).toEqual({ ok: false, status: 409, error: 'reference_id is already used by another memo in this project' });
    const again = await client.createMemos(memos, { batchSize: 2, idempotencyKey: 'sdk-bulk' });
    expect(again.map((r) => (r.ok ? r.memo_uuid : r.status))).toEqual(first.map((r) => (r.ok ? r.memo_uuid : r.status)));
    const created = first.flatMap((r) => (r.ok ? [r.memo_uuid] : []));
    await Promise.all(created.map(processed));
    expect((await client.getMemo('sdk-bulk-1', { idType: 'reference_id' })).uuid).toBe(created[0]);
  });

  it('searches, with the fused score and its lexical and dense parts', async () => {
    const { memo_uuid } = await client.createMemo({ title: 'Glaciers', content: 'Glaciers carve valleys slowly. Moraines mark where the ice stopped.' });
    await processed(memo_uuid);
    const { results } = await client.search({ query: 'glaciers moraines', search_method: 'chunk_vector_search', limit: 5 });
    const hit = results.find((r) => r.memo_uuid === memo_uuid);
    expect(hit?.score).toBeDefined();
    expect(hit!.score!.lexical + hit!.score!.dense).toBeCloseTo(hit!.score!.relevance, 6);
    expect(hit!.score!.relevance).toBeCloseTo(1 - hit!.distance!, 6);
    expect(hit!.score!.lexical).toBeGreaterThan(0);
  });

  it('streams a chat as an async iterator, continues it, and lists it', async () => {
    const { memo_uuid } = await client.createMemo({ title: 'Bees', content: 'Honey bees dance to tell the hive where flowers are.' });
    await processed(memo_uuid);
    const events: StreamEvent[] = [];
    for await (const event of client.chatStream({ query: 'How do bees tell where flowers are?' })) events.push(event);
    const tokens = events.filter((e) => e.type === 'token');
    expect(tokens.length).toBeGreaterThan(1);
    const citations = events.find((e) => e.type === 'citations');
    expect(citations && citations.type === 'citations' && citations.citations.map((c) => c.memo_uuid)).toContain(memo_uuid);
    const done = events.at(-1)!;
    expect(done.type).toBe('done');
    const chatId = done.type === 'done' ? done.chat_id! : '';
    const next = await client.chat({ query: 'And what do they make?', chat_id: chatId });
    expect(next.chat_id).toBe(chatId);
    const chat = await client.getChat(chatId);
    expect(chat.messages.map((m) => m.sent_by)).toEqual(['user', 'model', 'user', 'model']);
    expect((await client.listChats({ page_size: 5 })).results.map((c) => c.uuid)).toContain(chatId);
  });

  it('stops a stream when the caller breaks out of the loop, and generates a cited document', async () => {
    let seen = 0;
    for await (const event of client.generateStream({ prompt: 'Write about bees and glaciers' })) {
      if (event.type === 'token' && ++seen === 2) break;
    }
    expect(seen).toBe(2);
    const doc = await client.generate({ prompt: 'Write about bees', rules: 'short' });
    expect(doc.response.length).toBeGreaterThan(0);
    expect(doc.citations.length).toBeGreaterThan(0);
  });

  it('reads the project and rotates its key: the old key stops, the new one works', async () => {
    const { key } = await stack.project('rotating');
    const own = client.with({ apiKey: key });
    const info = await own.getProject();
    expect(info).toMatchObject({ name: 'rotating', rate_limit: { limit: 1000 } });
    expect(info.embedding.active_model).toBe('memex-glove-100d');
    const rotated = await own.rotateProjectKey();
    expect(rotated.api_key).toMatch(/^mxp_/);
    expect(rotated.project_id).toBe(info.project_id);
    const renewed = own.with({ apiKey: rotated.api_key });
    await eventually(async () => (await renewed.getProject().then(() => true, () => false)) || undefined, 5_000);
    await eventually(async () => ((await own.getProject().catch((e: unknown) => e)) as MemexApiError).status === 403 || undefined, 5_000);
    const refused = (await own.listChats().catch((e: unknown) => e)) as MemexApiError;
    expect(refused).toMatchObject({ status: 403, message: 'Invalid API key' });
  });
});
