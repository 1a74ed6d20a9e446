/**
 * The memo list's page links (`next`, `previous`, as Skald's SDK follows them) over HTTPS: through
 * the SDK with the CLI's https fetch, and by following each link as a client would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemexClient, type MemoListResponse } from './index';
import { httpsFetch } from '../../cli/src/client';
import { httpsJson } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { startStack, type Stack } from '../../../test/support/stack';

describe('memo list page links over HTTPS', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let key: string;
  let client: MemexClient;
  const created: string[] = [];
  const sources = new Map<string, string>();

  beforeAll(async () => {
    stack = await startStack({ indexer: false, env: { MEMEX_RATE_LIMIT: '1000' } });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key } = await stack.project('paging'));
    client = new MemexClient({ baseUrl: https.url, apiKey: key, fetch: httpsFetch({ ca: Buffer.from(https.ca) }) });
    for (let i = 0; i < 5; i++) {
      const source = i % 2 === 0 ? 'even' : 'odd';
      const { memo_uuid } = await client.createMemo({ title: `Paged memo ${i}`, content: `Memo number ${i} of the paging test.`, source });
      created.push(memo_uuid);
      sources.set(memo_uuid, source);
    }
  }, 90_000);

  afterAll(async () => {
    await https?.close();
    await stack?.stop();
  });

  const get = async (path: string): Promise<MemoListResponse> => {
    const res = await httpsJson<MemoListResponse>('GET', `${https.url}${path}`, { key, ca: https.ca });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('links page 1 to page 2 and has no previous page; the SDK reads both fields', async () => {
    const first = await client.listMemos({ page_size: 2 });
    expect(first).toMatchObject({ count: 5, page: 1, page_size: 2, total_pages: 3, previous: null, next: '/api/v1/memo?page_size=2&page=2' });
  });

  it('following next visits every memo once and ends with null; previous walks the same pages back', async () => {
    const forward: MemoListResponse[] = [];
    for (let link: string | null = '/api/v1/memo?page_size=2'; link !== null; ) {
      const page = await get(link);
      forward.push(page);
      link = page.next;
      expect(forward.length).toBeLessThanOrEqual(3);
    }
    expect(forward.map((page) => page.page)).toEqual([1, 2, 3]);
    const seen = forward.flatMap((page) => page.results.map((memo) => memo.uuid));
    expect([...seen].sort()).toEqual([...created].sort());
    expect(new Set(seen).size).toBe(seen.length);

    const backward: MemoListResponse[] = [forward[2]!];
    for (let link = forward[2]!.previous; link !== null; ) {
      const page = await get(link);
      backward.push(page);
      link = page.previous;
    }
    expect(backward.map((page) => page.page)).toEqual([3, 2, 1]);
    expect(backward.map((page) => page.results.map((memo) => memo.uuid))).toEqual(forward.map((page) => page.results.map((memo) => memo.uuid)).reverse());
  });

  it('keeps the filters and every other query parameter in the links', async () => {
    const filters = JSON.stringify([{ field: 'source', operator: 'eq', value: 'even', filter_type: 'native_field' }]);
    const first = await get(`/api/v1/memo?filters=${encodeURIComponent(filters)}&page_size=1`);
    expect(first).toMatchObject({ count: 3, total_pages: 3, previous: null });
    const next = new URL(first.next!, https.url);
    expect(next.pathname).toBe('/api/v1/memo');
    expect(Object.fromEntries(next.searchParams)).toEqual({ filters, page_size: '1', page: '2' });
    const second = await get(first.next!);
    expect(second.page).toBe(2);
    expect(second.results.map((memo) => sources.get(memo.uuid))).toEqual(['even']);
    expect(new URL(second.previous!, https.url).searchParams.get('filters')).toBe(filters);
  });

  it('beyond the last page: no next, and previous leads back to the last page with results', async () => {
    const beyond = await get('/api/v1/memo?page=9&page_size=2');
    expect(beyond).toMatchObject({ results: [], page: 9, total_pages: 3, next: null, previous: '/api/v1/memo?page=3&page_size=2' });
    expect((await get(beyond.previous!)).results).toHaveLength(1);
  });

  it('a project without memos has one empty page and no links', async () => {
    const { key: emptyKey } = await stack.project('empty');
    const res = await httpsJson<MemoListResponse>('GET', `${https.url}/api/v1/memo`, { key: emptyKey, ca: https.ca });
    expect(res.body).toMatchObject({ results: [], count: 0, page: 1, total_pages: 0, next: null, previous: null });
  });

  it('a bad page gets a 400 with an error, not links', async () => {
    const res = await httpsJson<{ error: string }>('GET', `${https.url}/api/v1/memo?page=0`, { key, ca: https.ca });
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe('string');
  });

  it('documents next and previous as nullable paths in the OpenAPI schema', async () => {
    const spec = (await httpsJson<{ components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> } }>('GET', `${https.url}/docs/json`, { ca: https.ca })).body;
    const schema = spec.components.schemas.MemoListResponse!;
    expect(schema.required).toEqual(expect.arrayContaining(['next', 'previous', 'page', 'page_size', 'total_pages']));
    for (const field of ['next', 'previous']) {
      expect(JSON.stringify(schema.properties[field])).toContain('"null"');
      expect(JSON.stringify(schema.properties[field])).toContain('absolute path');
    }
  });
});
