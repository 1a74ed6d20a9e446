/**
 * Documents end to end in one process: multipart upload through the gateway, the original sealed
 * in the blob store, the extractor service turning it into a content revision, the indexer and
 * agent processing it, then status, content, search, download, list, history and erasure. The
 * files are made by independent tools (pandoc, headless Chromium, exceljs).
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoListResponse, MemoStatusResponse, SearchResultItem } from '@memex/contracts';
import { loadExtractorConfig, startExtractorService, type ExtractorService } from '@memex/extractor';
import {
  GENERATED_EXTENSIONS,
  generateDocument,
  missingTools,
  sampleDocument,
  zipBombDocx,
  type GeneratedFormat,
} from '@memex/extractor/testing/documents';
import { silentLogger } from '@memex/runtime';
import { eventually } from '@memex/testing';
import { memoApi } from '../support/api';
import { multipart } from '../support/multipart';
import { startStack, type Stack } from '../support/stack';

const missing = missingTools();
const FORMATS: GeneratedFormat[] = ['pdf', 'docx', 'pptx', 'xlsx', 'odt', 'html', 'markdown', 'text'];
const MARKERS: Record<GeneratedFormat, string> = {
  pdf: 'osprey',
  docx: 'heron',
  pptx: 'plover',
  xlsx: 'curlew',
  odt: 'bittern',
  html: 'avocet',
  markdown: 'dunlin',
  text: 'godwit',
};

describe.skipIf(missing)(`documents: upload, extraction, catalog${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let stack: Stack;
  let extractor: ExtractorService;
  let key: string;
  let otherKey: string;
  const files = new Map<GeneratedFormat, Buffer>();
  const uploaded = new Map<GeneratedFormat, string>();

  beforeAll(async () => {
    stack = await startStack({ env: { EXTRACT_MAX_INFLATED_MB: '16', EXTRACT_CONCURRENCY: '2' } });
    extractor = await startExtractorService(loadExtractorConfig(stack.env), { logger: silentLogger() });
    ({ key } = await stack.project('documents'));
    ({ key: otherKey } = await stack.project('other'));
    for (const format of FORMATS) files.set(format, await generateDocument(format, sampleDocument(MARKERS[format])));
  }, 180_000);
  afterAll(async () => {
    await extractor?.stop();
    await stack?.stop();
  });

  const headers = (k = key) => ({ authorization: `Bearer ${k}` });
  async function upload(name: string, bytes: Buffer, fields: Record<string, string> = {}, k = key) {
    const { payload, contentType } = multipart({ name, bytes }, fields);
    return stack.app.inject({ method: 'POST', url: '/api/v1/memo', headers: { ...headers(k), 'content-type': contentType }, payload });
  }
  async function status(id: string, k = key) {
    return stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}/status`, headers: headers(k) });
  }
  /** Polls the status until it leaves `processing`. */
  function settled(id: string, timeoutMs = 60_000): Promise<MemoStatusResponse> {
    return eventually(async () => {
      const body = (await status(id)).json() as MemoStatusResponse;
      return body.status === 'processing' ? undefined : body;
    }, timeoutMs);
  }
  async function search(q: string): Promise<SearchResultItem[]> {
    const res = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/search',
      headers: headers(),
      payload: { query: q, search_method: 'chunk_vector_search', limit: 50 },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results;
  }

  it('uploads every format and answers at once with a pending document memo that keeps the file facts', async () => {
    for (const format of FORMATS) {
      const name = `report-${MARKERS[format]}.${GENERATED_EXTENSIONS[format]}`;
      const res = await upload(name, files.get(format)!, {
        source: 'uploads',
        metadata: JSON.stringify({ team: 'field', format }),
        tags: JSON.stringify(['Survey']),
      });
      expect(res.statusCode, res.body).toBe(200);
      const id = res.json().memo_uuid as string;
      uploaded.set(format, id);
      const memo = await memoApi(stack.app, key).get(id);
      expect(memo).toMatchObject({ title: name, type: 'document', source: 'uploads', pending: true });
      expect(memo.metadata).toMatchObject({ team: 'field', format, original_filename: name, size: files.get(format)!.length });
      expect(typeof memo.metadata.mimetype).toBe('string');
    }
  });

  it.each(FORMATS)('%s: status reaches processed, and the content holds the sentences and table cells', async (format) => {
    const id = uploaded.get(format)!;
    const final = await settled(id);
    expect(final, JSON.stringify(final)).toMatchObject({ memo_uuid: id, status: 'processed', error_reason: null });
    expect(Date.parse(final.processing_completed_at!)).toBeGreaterThanOrEqual(Date.parse(final.processing_started_at!));
    const memo = await memoApi(stack.app, key).get(id);
    const doc = sampleDocument(MARKERS[format]);
    const flat = memo.content.replace(/\s+/g, ' ');
    expect(flat).toContain(doc.sentence);
    for (const cell of doc.cells) expect(flat).toContain(cell);
    expect(memo.pending).toBe(false);
    expect(memo.tags.map((t) => t.tag)).toContain('Survey');
    expect(memo.chunks.length).toBeGreaterThan(0);
  });

  it.each(FORMATS)('%s: search finds a sentence of the document', async (format) => {
    const id = uploaded.get(format)!;
    const hits = await search(`${MARKERS[format]} survey measured retreat`);
    expect(hits.slice(0, 3).map((h) => h.memo_uuid)).toContain(id);
  });

  it.each(FORMATS)('%s: the download is byte-identical, with its type and file name', async (format) => {
    const id = uploaded.get(format)!;
    const res = await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}/file`, headers: headers() });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(files.get(format)!)).toBe(true);
    expect(res.headers['content-disposition']).toContain(`report-${MARKERS[format]}.${GENERATED_EXTENSIONS[format]}`);
    expect(res.headers['content-type']).toBeTruthy();
  });

  it('another project gets 404 on the memo, its status, its file and its history', async () => {
    const id = uploaded.get('pdf')!;
    for (const suffix of ['', '/status', '/file', '/history']) {
      const res = await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}${suffix}`, headers: headers(otherKey) });
      expect(res.statusCode, suffix).toBe(404);
      expect(res.json()).toEqual({ error: 'Memo not found' });
    }
  });

  it('status answers carry an ETag; polling with it gets 304 while nothing changes', async () => {
    const id = uploaded.get('text')!;
    const first = await status(id);
    expect(first.headers['cache-control']).toBe('private, max-age=1');
    const again = await stack.app.inject({
      method: 'GET',
      url: `/api/v1/memo/${id}/status`,
      headers: { ...headers(), 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
  });

  it('the list pages through every memo exactly once, newest first, and filters', async () => {
    const extra = await memoApi(stack.app, key).create({ title: 'Plain memo', content: 'Typed, not uploaded.', source: 'typed' });
    const seen: string[] = [];
    let pages = 0;
    for (let page = 1; ; page++) {
      const res = await stack.app.inject({ method: 'GET', url: `/api/v1/memo?page=${page}&page_size=3`, headers: headers() });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as MemoListResponse;
      expect(body).toMatchObject({ count: FORMATS.length + 1, page, page_size: 3, total_pages: Math.ceil((FORMATS.length + 1) / 3) });
      if (body.results.length === 0) break;
      pages++;
      for (const item of body.results) {
        expect(Object.keys(item).sort()).toEqual(
          ['client_reference_id', 'content_length', 'created_at', 'metadata', 'processing_status', 'summary', 'title', 'updated_at', 'uuid'].sort(),
        );
      }
      seen.push(...body.results.map((r) => r.uuid));
    }
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual([...uploaded.values(), extra].sort());

    const filters = encodeURIComponent(JSON.stringify([{ field: 'source', operator: 'eq', value: 'typed', filter_type: 'native_field' }]));
    const filtered = (await stack.app.inject({ method: 'GET', url: `/api/v1/memo?filters=${filters}`, headers: headers() })).json();
    expect(filtered.results.map((r: { uuid: string }) => r.uuid)).toEqual([extra]);
    const other = (await stack.app.inject({ method: 'GET', url: '/api/v1/memo', headers: headers(otherKey) })).json();
    expect(other.count).toBe(0);
    for (const bad of ['page=0', 'page_size=101', 'page=x', 'filters=nope', `filters=${encodeURIComponent('[{"field":"x"}]')}`]) {
      const res = await stack.app.inject({ method: 'GET', url: `/api/v1/memo?${bad}`, headers: headers() });
      expect(res.statusCode, bad).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
  });

  it('history names who changed what, without content; after DELETE the memo, its history and its file are gone', async () => {
    const id = uploaded.get('markdown')!;
    const res = await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}/history`, headers: headers() });
    expect(res.statusCode).toBe(200);
    const { revisions } = res.json() as { revisions: { event: string; actor: string; fields: string[]; content_revision: number | null }[] };
    expect(revisions[0]).toMatchObject({ event: 'MemoCreated', actor: 'client', content_revision: 1 });
    expect(revisions[0]!.fields).toContain('file');
    expect(revisions).toContainEqual(expect.objectContaining({ event: 'MemoContentChanged', actor: 'extractor', fields: ['content'], content_revision: 2 }));
    expect(revisions).toContainEqual(expect.objectContaining({ event: 'MemoChunked', actor: 'indexer', content_revision: 2 }));
    // the summary and the tags found with it: one event
    expect(revisions).toContainEqual(expect.objectContaining({ event: 'MemoSummarized', actor: 'agent', fields: ['summary', 'tags'], content_revision: 2 }));
    expect(revisions.map((r) => r.event)).not.toContain('MemoTagged');
    expect(res.body).not.toContain(sampleDocument(MARKERS.markdown).sentence);

    const del = await stack.app.inject({ method: 'DELETE', url: `/api/v1/memo/${id}`, headers: headers() });
    expect(del.statusCode).toBe(204);
    for (const suffix of ['', '/status', '/file', '/history']) {
      const gone = await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}${suffix}`, headers: headers() });
      expect(gone.statusCode, suffix).toBe(404);
    }
  });

  it('documents the routes in the OpenAPI: operationIds, named schemas, servers', async () => {
    const spec = (await stack.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(spec.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(spec.paths['/api/v1/memo'].get.operationId).toBe('listMemos');
    expect(spec.paths['/api/v1/memo/{memo_id}/status'].get.operationId).toBe('getMemoStatus');
    expect(spec.paths['/api/v1/memo/{memo_id}/history'].get.operationId).toBe('getMemoHistory');
    expect(spec.paths['/api/v1/memo/{memo_id}/file'].get.operationId).toBe('downloadMemoFile');
    for (const name of ['MemoListResponse', 'MemoListItem', 'MemoStatusResponse', 'MemoHistoryResponse', 'MemoHistoryEntry']) {
      expect(spec.components.schemas[name], name).toBeDefined();
    }
    expect(JSON.stringify(spec.paths['/api/v1/memo/{memo_id}/status'].get.responses['200'])).toContain('#/components/schemas/MemoStatusResponse');
  });

  describe('bad files', () => {
    it('empty, unknown and mismatched files get 400/415 with an error, and nothing is created', async () => {
      const before = (await stack.app.inject({ method: 'GET', url: '/api/v1/memo', headers: headers() })).json().count as number;
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
      const cases: [string, Buffer, number][] = [
        ['empty.pdf', Buffer.alloc(0), 400],
        ['photo.pdf', png, 415],
        ['report.docx', files.get('pdf')!, 415],
        ['tool.exe', Buffer.from('MZ\x90\x00'), 415],
      ];
      for (const [name, bytes, code] of cases) {
        const res = await upload(name, bytes);
        expect(res.statusCode, name).toBe(code);
        expect(typeof res.json().error).toBe('string');
      }
      const noFile = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/memo',
        headers: { ...headers(), 'content-type': 'multipart/form-data; boundary=x' },
        payload: '--x\r\nContent-Disposition: form-data; name="title"\r\n\r\nT\r\n--x--\r\n',
      });
      expect(noFile.statusCode).toBe(400);
      expect((await stack.app.inject({ method: 'GET', url: '/api/v1/memo', headers: headers() })).json().count).toBe(before);
    });

    it('a 101 MB upload gets 413 from the declared length', async () => {
      const { payload, contentType } = multipart({ name: 'huge.txt', bytes: Buffer.alloc(101 * 1024 * 1024, 0x61) });
      const res = await stack.app.inject({ method: 'POST', url: '/api/v1/memo', headers: { ...headers(), 'content-type': contentType }, payload });
      expect(res.statusCode).toBe(413);
      expect(res.json().error).toMatch(/upload limit/);
    });

    it('a 101 MB upload without a declared length is cut off at the limit with 413', async () => {
      const { payload, contentType } = multipart({ name: 'huge.txt', bytes: Buffer.alloc(101 * 1024 * 1024, 0x61) });
      const chunks = function* () {
        for (let i = 0; i < payload.length; i += 1024 * 1024) yield payload.subarray(i, i + 1024 * 1024);
      };
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/memo',
        headers: { ...headers(), 'content-type': contentType, 'transfer-encoding': 'chunked' },
        payload: Readable.from(chunks()),
      });
      expect(res.statusCode).toBe(413);
      expect(res.json().error).toMatch(/upload limit/);
      expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    });

    it('a corrupt PDF and a zip bomb end in status error with a reason, and the stack keeps answering', async () => {
      const pdf = files.get('pdf')!;
      const corrupt = (await upload('broken.pdf', pdf.subarray(0, 300))).json().memo_uuid as string;
      const bomb = (await upload('bomb.docx', zipBombDocx(64))).json().memo_uuid as string;
      const corruptStatus = await settled(corrupt);
      expect(corruptStatus.status).toBe('error');
      expect(corruptStatus.error_reason).toMatch(/^extracting: /);
      const bombStatus = await settled(bomb);
      expect(bombStatus).toMatchObject({ status: 'error', error_reason: expect.stringMatching(/decompression bomb/) });
      expect((await memoApi(stack.app, key).get(bomb)).processing_error?.stage).toBe('extracting');
      // Still answering: a new upload goes all the way through.
      const ok = (await upload('after.md', Buffer.from('# After\n\nThe stack still extracts documents after bad ones.'))).json().memo_uuid;
      expect((await settled(ok)).status).toBe('processed');
    });
  });

  // Skald's Node SDK 0.3 uploads to POST /api/v1/memo/upload: a `file` part named after the file,
  // then reference_id, metadata and tags as JSON text, and source; it reads { ok, memo_uuid } and
  // polls GET /api/v1/memo/{id}/status?id_type=reference_id.
  describe("Skald's older upload path", () => {
    it('takes the same form as POST /api/v1/memo and the memo goes through extraction', async () => {
      const { payload, contentType } = multipart(
        { name: 'survey.docx', bytes: files.get('docx')! },
        { reference_id: 'sdk-upload-1', metadata: JSON.stringify({ kind: 'upload' }), tags: JSON.stringify(['docs']), source: 'drive' },
      );
      const res = await stack.app.inject({ method: 'POST', url: '/api/v1/memo/upload', headers: { ...headers(), 'content-type': contentType }, payload });
      expect(res.statusCode, res.body).toBe(200);
      const { ok, memo_uuid: id } = res.json() as { ok: boolean; memo_uuid: string };
      expect(ok).toBe(true);
      expect(res.headers.location).toBe(`/api/v1/memo/${id}`);
      const byRef = await eventually(async () => {
        const body = (await stack.app.inject({ method: 'GET', url: '/api/v1/memo/sdk-upload-1/status?id_type=reference_id', headers: headers() })).json() as MemoStatusResponse;
        return body.status === 'processing' ? undefined : body;
      }, 60_000);
      expect(byRef).toMatchObject({ memo_uuid: id, status: 'processed' });
      const memo = await memoApi(stack.app, key).get(id);
      expect(memo).toMatchObject({ title: 'survey.docx', type: 'document', source: 'drive', client_reference_id: 'sdk-upload-1' });
      expect(memo.metadata).toMatchObject({ kind: 'upload', original_filename: 'survey.docx' });
      expect(memo.tags.map((t) => t.tag)).toContain('docs');
      expect(memo.content.replace(/\s+/g, ' ')).toContain(sampleDocument(MARKERS.docx).sentence);
    });

    it('refuses a body without a file, a missing key and a declared length over the limit as the main route does', async () => {
      const json = await stack.app.inject({ method: 'POST', url: '/api/v1/memo/upload', headers: headers(), payload: { title: 'T', content: 'C' } });
      expect(json.statusCode).toBe(400);
      expect(json.json()).toEqual({ error: 'A multipart upload needs a file part named "file"' });
      const { payload, contentType } = multipart({ name: 'a.txt', bytes: Buffer.from('text') });
      const anonymous = await stack.app.inject({ method: 'POST', url: '/api/v1/memo/upload', headers: { 'content-type': contentType }, payload });
      expect(anonymous.statusCode).toBe(401);
      const huge = multipart({ name: 'huge.txt', bytes: Buffer.alloc(101 * 1024 * 1024, 0x61) });
      const tooLarge = await stack.app.inject({ method: 'POST', url: '/api/v1/memo/upload', headers: { ...headers(), 'content-type': huge.contentType }, payload: huge.payload });
      expect(tooLarge.statusCode).toBe(413);
    });
  });
});
