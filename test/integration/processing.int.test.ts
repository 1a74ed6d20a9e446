import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INLINE_CONTENT_MAX_BYTES, Subjects, type Filter, type SearchResultItem } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { memoApi } from '../support/api';
import { startStack, type Stack } from '../support/stack';

describe('processing and search through the whole stack', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    stack = await startStack();
    ({ key } = await stack.project('main'));
    ({ key: otherKey } = await stack.project('other'));
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const headers = (k = key) => ({ authorization: `Bearer ${k}` });
  const create = (body: Record<string, unknown>, k = key) => memoApi(stack.app, k).create(body);
  const processed = (id: string, k = key) => memoApi(stack.app, k).processed(id);
  async function search(query: string, extra: Record<string, unknown> = {}, k = key): Promise<SearchResultItem[]> {
    const res = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/search',
      headers: headers(k),
      payload: { query, search_method: 'chunk_vector_search', ...extra },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results;
  }

  const turbine =
    'Gas turbine blades operate at extreme temperatures. Engineers cool them with air bled from the compressor.\n\n' +
    'Thermal barrier coatings protect the blade metal. Cracks in the coating shorten the life of the blade.';

  it('processes a memo to pending:false with summary, tags (given + generated) and chunks', async () => {
    const started = Date.now();
    const id = await create({ title: 'Turbine cooling', content: turbine, tags: ['Engineering'] });
    const memo = await processed(id);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(5_000);
    expect(memo.summary.length).toBeGreaterThan(20);
    expect(memo.tags[0]?.tag).toBe('Engineering');
    expect(memo.tags.length).toBeGreaterThan(1);
    expect(memo.tags.slice(1).every((t) => t.tag === t.tag.toLowerCase())).toBe(true);
    expect(memo.chunks.length).toBeGreaterThan(0);
    expect(memo.chunks.map((c) => c.chunk_index)).toEqual(memo.chunks.map((_, i) => i));
    expect(memo.processing_error).toBeNull();
  });

  it('seals the commands a memo sends for transit: encrypted, not deflated (the work queue drops them once handled)', async () => {
    // Each command's sealed box starts with its format byte: 1 sealed as is, 2 deflated first.
    const formats = new Map<string, number>();
    const sub = stack.nc.subscribe(Subjects.memoCommandsAll, {
      callback: (_error, msg) => {
        const { sealed, items } = msg.json<{ sealed?: string; items?: { sealed: string }[] }>();
        // A batch command (single POSTs go as create-batch) seals each item apart, under its own memo's key.
        for (const box of [sealed, ...(items ?? []).map((i) => i.sealed)]) {
          if (box !== undefined) formats.set(Subjects.memoCommandName(msg.subject), Buffer.from(box, 'base64')[0]!);
        }
      },
    });
    await stack.nc.flush();
    const id = await create({ title: 'Turbine cooling, again', content: `${turbine}\n\n${turbine}` });
    await processed(id);
    sub.unsubscribe();
    expect(Object.fromEntries(formats)).toEqual({ 'create-batch': 1, 'record-chunks-batch': 1, 'record-summary-batch': 1 });
  });

  it('finds a memo by meaning and by exact terms, closest first, with the spec fields', async () => {
    const id = await create({ title: 'Coffee brewing', content: 'Espresso is brewed by forcing hot water through finely ground coffee beans.' });
    await processed(id);
    const hits = await search('how is espresso made');
    expect(hits[0]).toMatchObject({ memo_uuid: id, memo_title: 'Coffee brewing', chunk_content: expect.stringContaining('Espresso') });
    expect(typeof hits[0]!.distance).toBe('number');
    expect(hits[0]!.chunk_uuid).toMatch(/^[0-9a-f-]{36}$/);
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.distance!).toBeGreaterThanOrEqual(hits[i - 1]!.distance!);
    expect(hits.every((h) => h.distance! >= 0 && h.distance! <= 1)).toBe(true);
  });

  it('never returns another project\'s chunks', async () => {
    const mine = await create({ title: 'Zeppelin notes', content: 'The zeppelin hangar in Friedrichshafen is enormous.' });
    const theirs = await create({ title: 'Zeppelin notes', content: 'The zeppelin hangar in Friedrichshafen is enormous.' }, otherKey);
    await processed(mine);
    await processed(theirs, otherKey);
    const hits = await search('zeppelin hangar', { limit: 50 });
    expect(hits.map((h) => h.memo_uuid)).toContain(mine);
    expect(hits.map((h) => h.memo_uuid)).not.toContain(theirs);
    const titleHits = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/search',
      headers: headers(),
      payload: { query: 'zeppelin', search_method: 'title_contains' },
    });
    expect(titleHits.json().results.map((h: SearchResultItem) => h.memo_uuid)).toEqual([mine]);
  });

  it('answers title search with the memo\'s first chunk, for content kept inline and in the blob store', async () => {
    const small = await create({ title: 'Lighthouse keeper log', content: `${turbine}\n\nThe keeper logs the lamp hours.` });
    const large = await create({ title: 'Lighthouse keeper archive', content: 'The archive of the keeper. '.repeat(Math.ceil(INLINE_CONTENT_MAX_BYTES / 27) + 10) });
    const memos = [await processed(small), await processed(large)];
    const res = await stack.app.inject({ method: 'POST', url: '/api/v1/search', headers: headers(), payload: { query: 'lighthouse keeper', search_method: 'title_startswith' } });
    expect(res.statusCode).toBe(200);
    const results: SearchResultItem[] = res.json().results;
    expect(results.map((r) => r.memo_uuid)).toEqual([large, small]);
    for (const memo of memos) {
      const hit = results.find((r) => r.memo_uuid === memo.uuid)!;
      expect(hit.chunk_content).toBe(memo.chunks[0]!.chunk_content);
      expect(hit.chunk_uuid).toBe(memo.chunks[0]!.uuid);
      expect(hit.chunk_content!.length).toBeGreaterThan(50);
    }
  });

  it('applies filters before ranking, and a PATCH of title or metadata is visible to them at once', async () => {
    const a = await create({ title: 'Budget alpha', content: 'Quarterly budget planning for the marketing team.', metadata: { team: 'red' }, source: 'drive' });
    const b = await create({ title: 'Budget beta', content: 'Quarterly budget planning for the sales team.', metadata: { team: 'blue' }, source: 'slack' });
    await processed(a);
    await processed(b);
    const red: Filter[] = [{ field: 'team', operator: 'eq', value: 'red', filter_type: 'custom_metadata' }];
    expect((await search('budget planning', { filters: red })).map((h) => h.memo_uuid)).toEqual([a]);
    const slackOnly: Filter[] = [{ field: 'source', operator: 'in', value: ['slack'], filter_type: 'native_field' }];
    expect((await search('budget planning', { filters: slackOnly })).map((h) => h.memo_uuid)).toEqual([b]);

    const patched = await stack.app.inject({ method: 'PATCH', url: `/api/v1/memo/${b}`, headers: headers(), payload: { metadata: { team: 'red' }, title: 'Budget gamma' } });
    expect(patched.statusCode).toBe(200);
    expect((await search('budget planning', { filters: red })).map((h) => h.memo_uuid).sort()).toEqual([a, b].sort());
    const byTitle: Filter[] = [{ field: 'title', operator: 'startswith', value: 'Budget g', filter_type: 'native_field' }];
    expect((await search('budget planning', { filters: byTitle })).map((h) => h.memo_title)).toEqual(['Budget gamma']);
  });

  it('a content PATCH removes the old chunks from search at once and regenerates everything', async () => {
    const id = await create({ title: 'Changing memo', content: 'Original text about volcanoes and lava flows.', tags: ['given'] });
    await processed(id);
    expect((await search('volcanoes lava')).map((h) => h.memo_uuid)).toContain(id);
    const res = await stack.app.inject({ method: 'PATCH', url: `/api/v1/memo/${id}`, headers: headers(), payload: { content: 'New text about glaciers and ice sheets.' } });
    expect(res.statusCode).toBe(200);
    // The memo may still rank (its new text is about geology too), but never with the old text.
    const after = await search('volcanoes lava', { limit: 50 });
    expect(after.filter((h) => h.memo_uuid === id && /volcano/i.test(h.chunk_content ?? ''))).toEqual([]);
    const memo = await processed(id);
    expect(memo.tags.map((t) => t.tag)).not.toContain('given');
    expect(memo.summary).toMatch(/glaciers/);
    expect(memo.chunks[0]!.chunk_content).toMatch(/glaciers/);
    expect((await search('glaciers ice')).map((h) => h.memo_uuid)).toContain(id);
  });

  it('indexes chunks with their memo\'s title, and re-indexes them when only the title changes', async () => {
    const id = await create({ title: 'Zebrafish regeneration', content: 'The fins grow back within two weeks after an injury.' });
    await processed(id);
    const lexical = async (word: string) => (await search(word, { limit: 50 })).filter((h) => h.memo_uuid === id && h.distance! < 0.5);
    expect(await lexical('zebrafish')).toHaveLength(1);
    const res = await stack.app.inject({ method: 'PATCH', url: `/api/v1/memo/${id}`, headers: headers(), payload: { title: 'Axolotl limbs' } });
    expect(res.statusCode).toBe(200);
    await eventually(async () => (await lexical('axolotl')).length === 1, 5_000);
    expect(await lexical('zebrafish')).toEqual([]);
    // The chunk text itself is unchanged, and search still returns only the text.
    expect((await lexical('axolotl'))[0]!.chunk_content).toBe('The fins grow back within two weeks after an injury.');
  });

  it('DELETE removes every chunk from every search method', async () => {
    const id = await create({ title: 'Ephemeral walrus', content: 'Walruses use their tusks to haul out onto ice.' });
    await processed(id);
    expect((await search('walrus tusks')).map((h) => h.memo_uuid)).toContain(id);
    const del = await stack.app.inject({ method: 'DELETE', url: `/api/v1/memo/${id}`, headers: headers() });
    expect(del.statusCode).toBe(204);
    expect((await search('walrus tusks')).map((h) => h.memo_uuid)).not.toContain(id);
    for (const method of ['title_contains', 'title_startswith']) {
      const res = await stack.app.inject({ method: 'POST', url: '/api/v1/search', headers: headers(), payload: { query: 'Ephemeral', search_method: method } });
      expect(res.json().results).toEqual([]);
    }
  });

  it('erases an expired memo as DELETE does: gone from search and from GET', async () => {
    const id = await create({ title: 'Short-lived otter', content: 'Sea otters hold hands while sleeping.', expiration_date: new Date(Date.now() + 1_500).toISOString() });
    await processed(id);
    expect((await search('otters sleeping')).map((h) => h.memo_uuid)).toContain(id);
    await eventually(async () => (await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers: headers() })).statusCode === 404, 10_000);
    await eventually(async () => !(await search('otters sleeping')).map((h) => h.memo_uuid).includes(id), 5_000);
  });

  it('carries the request id from the HTTP request through every command and event it causes', async () => {
    const requestId = `req-${Date.now()}`;
    const seen = new Map<string, string | undefined>();
    const sub = stack.nc.subscribe('memex.>', {
      callback: (_err, msg) => {
        if (msg.subject.startsWith('memex.cmd.') || msg.subject.startsWith('memex.evt.')) {
          const kind = msg.subject.startsWith('memex.cmd.') ? msg.subject.split('.').at(-1)! : msg.headers?.get('Memex-Event-Type') ?? '?';
          if (msg.headers?.get('Memex-Request-Id') === requestId) seen.set(kind, requestId);
        }
      },
    });
    try {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/memo',
        headers: { ...headers(), 'x-request-id': requestId },
        payload: { title: 'Traced', content: 'A memo whose request id is followed. It has two sentences.' },
      });
      expect(res.headers['x-request-id']).toBe(requestId);
      await processed(res.json().memo_uuid);
      await eventually(() => ['create-batch', 'MemoCreated', 'record-chunks-batch', 'record-summary-batch', 'MemoChunked', 'MemoSummarized'].every((k) => seen.has(k)), 5_000);
    } finally {
      sub.unsubscribe();
    }
  });

  it('answers search validation errors with the spec texts', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ search_method: 'chunk_vector_search' }, 'Query is required'],
      [{ query: 'x' }, 'Search method is required and must be one of: title_contains, title_startswith, chunk_vector_search'],
      [{ query: 'x', search_method: 'fuzzy' }, 'Search method is required and must be one of: title_contains, title_startswith, chunk_vector_search'],
      [{ query: 'x', search_method: 'chunk_vector_search', limit: 51 }, 'Limit must be less than or equal to 50'],
      [{ query: 'x', search_method: 'chunk_vector_search', filters: [{ field: 'title' }] }, "Invalid filter: filter 0 is missing 'operator'"],
    ];
    for (const [payload, error] of cases) {
      const res = await stack.app.inject({ method: 'POST', url: '/api/v1/search', headers: headers(), payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error });
    }
  });
});
