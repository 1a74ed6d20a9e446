/**
 * The API as a user meets it, over HTTPS only, against any running Memex (test/support/target.ts):
 * a stack started here by default, or the one MEMEX_E2E_URL names (the container suites point it at
 * the Compose stack). Auth, a memo's whole life, a real document's upload, a large memo, chat
 * (plain and streamed) with citations, and one project never seeing another's memos.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatResponse, Memo, MemoListResponse, MemoStatusResponse, SearchResultItem } from '@memex/contracts';
import { generateDocument, missingTools, sampleDocument } from '@memex/extractor/testing/documents';
import { eventually } from '@memex/testing';
import { bigText } from '../support/bigText';
import { multipart } from '../support/multipart';
import { startTarget, type Target } from '../support/target';

const MiB = 1024 * 1024;
const missingDocTools = missingTools();

describe('the HTTPS API end to end', () => {
  let t: Target;
  /** Each run's reference ids are its own, so a long-lived target can run the suite again. */
  const run = randomUUID().slice(0, 8);

  beforeAll(async () => {
    t = await startTarget();
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  const processed = (id: string, timeoutMs = 60_000) =>
    eventually(async () => {
      const res = await t.api<Memo>('GET', `/api/v1/memo/${id}`);
      expect(res.status, res.text.slice(0, 200)).toBe(200);
      return res.body.pending ? undefined : res.body;
    }, timeoutMs, 250);
  const search = async (query: string, key = t.key) => {
    const res = await t.api<{ results: SearchResultItem[] }>('POST', '/api/v1/search', { query, search_method: 'chunk_vector_search', limit: 10 }, key);
    expect(res.status, res.text).toBe(200);
    return res.body.results;
  };

  it('is ready, keeps metrics off the public port, and refuses a missing or wrong key', async () => {
    const ready = await t.api<{ ready: boolean }>('GET', '/readyz', undefined, null);
    expect(ready.status, ready.text).toBe(200);
    expect(ready.body.ready).toBe(true);
    expect(await t.api('GET', '/metrics', undefined, null)).toMatchObject({ status: 404, body: { error: 'Not found' } });
    const someId = '00000000-0000-4000-8000-000000000000';
    expect((await t.api('GET', `/api/v1/memo/${someId}`, undefined, null)).status).toBe(401);
    expect((await t.api('GET', `/api/v1/memo/${someId}`, undefined, 'mxp_wrong')).status).toBe(403);
  });

  it('runs a memo through create, read, processing, search, patch and delete', async () => {
    const reference = `ops-${run}`;
    const created = await t.api<{ ok: boolean; memo_uuid: string }>('POST', '/api/v1/memo', {
      title: 'Harbour logistics',
      content: 'Container ships unload at the harbour cranes. Trucks carry the containers inland.',
      reference_id: reference,
      tags: ['ops'],
      metadata: { region: `north-${run}` },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.memo_uuid;
    const byRef = await t.api<Memo>('GET', `/api/v1/memo/${reference}?id_type=reference_id`);
    expect(byRef.status).toBe(200);
    expect(byRef.body.uuid).toBe(id);

    const done = await processed(id);
    expect(done.chunks.length).toBeGreaterThan(0);
    expect(done.summary).not.toBe('');
    expect(done.processing_error).toBeNull();

    const found = await t.api<{ results: SearchResultItem[] }>('POST', '/api/v1/search', {
      query: 'ships unloading containers',
      search_method: 'chunk_vector_search',
      filters: [{ field: 'region', operator: 'eq', value: `north-${run}`, filter_type: 'custom_metadata' }],
    });
    expect(found.status, found.text).toBe(200);
    expect(found.body.results.map((r) => r.memo_uuid)).toEqual([id]);

    expect(await t.api('PATCH', `/api/v1/memo/${id}?id_type=nope`, { title: 'x' })).toMatchObject({
      status: 400,
      body: { error: "id_type must be either 'memo_uuid' or 'reference_id'" },
    });
    expect(await t.api('PATCH', `/api/v1/memo/${reference}?id_type=reference_id`, { title: 'Port logistics' })).toMatchObject({ status: 200, body: { ok: true } });
    expect((await t.api<Memo>('GET', `/api/v1/memo/${id}`)).body.title).toBe('Port logistics');

    expect((await t.api('DELETE', `/api/v1/memo/${id}`)).status).toBe(204);
    expect(await t.api('GET', `/api/v1/memo/${id}`)).toMatchObject({ status: 404, body: { error: 'Memo not found' } });
    expect((await search('ships unloading containers')).map((r) => r.memo_uuid)).not.toContain(id);
  });

  describe.skipIf(missingDocTools)(`a real document${missingDocTools ? ` (skipped: ${missingDocTools})` : ''}`, () => {
    it('uploads a DOCX made by pandoc: processed, searchable, listed, downloadable byte for byte, and invisible to another project', async () => {
      const marker = `sandpiper${run.replace(/[^a-z]/g, '')}`;
      const doc = sampleDocument(marker, 'estuary');
      const bytes = await generateDocument('docx', doc);
      const name = `survey-${run}.docx`;
      const form = multipart({ name, bytes }, { reference_id: `doc-${run}`, tags: '["survey"]' });
      const up = await t.api<{ memo_uuid: string }>('POST', '/api/v1/memo', undefined, t.key, { bytes: form.payload, contentType: form.contentType });
      expect(up.status, up.text).toBe(200);
      const id = up.body.memo_uuid;

      const status = await eventually(async () => {
        const res = await t.api<MemoStatusResponse>('GET', `/api/v1/memo/${id}/status`);
        expect(res.status, res.text).toBe(200);
        return res.body.status === 'processing' ? undefined : res.body;
      }, 120_000, 250);
      expect(status).toMatchObject({ memo_uuid: id, status: 'processed', error_reason: null });

      const memo = await processed(id);
      expect(memo).toMatchObject({ title: name, type: 'document' });
      expect(memo.metadata).toMatchObject({ original_filename: name, size: bytes.length });
      expect(memo.content).toContain(doc.sentence);
      for (const cell of doc.cells) expect(memo.content).toContain(cell);
      expect((await search(doc.sentence)).map((r) => r.memo_uuid)).toContain(id);

      const file = await t.api<string>('GET', `/api/v1/memo/${id}/file`);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toContain('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
      expect(String(file.headers['content-disposition'])).toContain(name);
      expect(file.bytes.equals(bytes)).toBe(true);

      const list = await t.api<MemoListResponse>('GET', `/api/v1/memo?page_size=100&filters=${encodeURIComponent(JSON.stringify([{ field: 'original_filename', operator: 'eq', value: name, filter_type: 'custom_metadata' }]))}`);
      expect(list.status, list.text).toBe(200);
      expect(list.body.results.map((m) => m.uuid)).toEqual([id]);
      expect(list.body.results[0]).toMatchObject({ title: name, processing_status: 'processed' });

      for (const path of [`/api/v1/memo/${id}`, `/api/v1/memo/${id}/status`, `/api/v1/memo/${id}/file`]) {
        expect((await t.api('GET', path, undefined, t.otherKey)).status, path).toBe(404);
      }
      expect((await search(doc.sentence, t.otherKey)).map((r) => r.memo_uuid)).not.toContain(id);

      expect((await t.api('DELETE', `/api/v1/memo/${id}`)).status).toBe(204);
      expect((await t.api('GET', `/api/v1/memo/${id}/file`)).status).toBe(404);
    }, 180_000);
  });

  it('stores a 2 MiB memo whole, reads it back byte for byte and finds its last sentence; refuses content over the limit with 413', async () => {
    const last = `The vermilion ferryman ${run.replace(/[^a-z]/g, '')} logs the tide.`;
    const content = bigText(2 * MiB, last, 2 * MiB);
    const created = await t.api<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `Big ledger ${run}`, content });
    expect(created.status, created.text.slice(0, 200)).toBe(200);
    const memo = await eventually(async () => {
      const res = await t.api<Memo>('GET', `/api/v1/memo/${created.body.memo_uuid}`);
      return res.status === 200 && !res.body.pending ? res.body : undefined;
    }, 120_000, 1_000);
    expect(memo.content === content).toBe(true);
    expect(memo.chunks.at(-1)!.chunk_content).toContain(last);
    expect((await search(last)).map((r) => r.memo_uuid)).toContain(memo.uuid);

    const over = await t.api<{ error: string }>('POST', '/api/v1/memo', { title: 'too big', content: 'x'.repeat(16 * MiB + 1) });
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: expect.any(String) });
  }, 180_000);

  it('answers a chat from the memos with citations, plain and streamed, and continues it', async () => {
    const marker = `lighthouse ${run.replace(/[^a-z]/g, '')}`;
    const created = await t.api<{ memo_uuid: string }>('POST', '/api/v1/memo', {
      title: `Keeper's log ${run}`,
      content: `The ${marker} keeper lights the lamp at dusk. Fog horns sound when the visibility drops below a mile.`,
    });
    expect(created.status, created.text).toBe(200);
    await processed(created.body.memo_uuid);

    const chat = await t.api<ChatResponse>('POST', '/api/v1/chat', { query: `When does the ${marker} keeper light the lamp?` });
    expect(chat.status, chat.text).toBe(200);
    expect(chat.body.response.trim()).not.toBe('');
    expect(chat.body.citations.map((c) => c.memo_uuid)).toContain(created.body.memo_uuid);

    const streamed = await t.api<string>('POST', '/api/v1/chat', { query: 'When do the fog horns sound?', stream: true, chat_id: chat.body.chat_id });
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    const events = streamed.text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; content?: string; chat_id?: string });
    expect(events.filter((e) => e.type === 'token').length).toBeGreaterThan(0);
    expect(events.at(-1)).toEqual({ type: 'done', chat_id: chat.body.chat_id });

    const history = await t.api<{ messages: { role: string }[] }>('GET', `/api/v1/chat/${chat.body.chat_id}`);
    expect(history.status, history.text).toBe(200);
    expect(history.body.messages.length).toBe(4);
  }, 120_000);
});
