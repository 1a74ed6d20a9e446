/**
 * INDEXER_ROLE: an ingest-only indexer writes the embedded index and answers no search; a
 * search-only indexer, sharing its SQLite file, answers every search and consumes no event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchResultItem } from '@memex/contracts';
import { loadIndexerConfig, startIndexerService, type IndexerService } from '@memex/indexer';
import { collectMetrics } from '@memex/runtime';
import { memoApi } from '../support/api';
import { counter } from '../support/metrics';
import { startStack, type Stack } from '../support/stack';

describe('indexer roles: ingest-only and search-only instances over one embedded index', () => {
  let stack: Stack;
  let key: string;
  let ingest: IndexerService;
  let search: IndexerService;

  beforeAll(async () => {
    stack = await startStack({ indexer: false });
    // Both under the stack's MEMEX_DATA_DIR: one SQLite file (indexer/index.db).
    const env = stack.env;
    ingest = await startIndexerService(loadIndexerConfig({ ...env, INDEXER_ROLE: 'ingest' }), { instance: 'ingest-only' });
    search = await startIndexerService(loadIndexerConfig({ ...env, INDEXER_ROLE: 'search' }), { instance: 'search-only' });
    ({ key } = await stack.project('roles'));
  }, 60_000);
  afterAll(async () => {
    await search?.stop();
    await ingest?.stop();
    await stack?.stop();
  });

  it('indexes with one and searches with the other', async () => {
    const api = memoApi(stack.app, key);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await api.create({ title: `Lighthouse ${i}`, content: `Report ${i} on lighthouse lenses and fog signals along the coast. A second sentence.` }));
    }
    for (const id of ids) await api.processed(id);

    for (let i = 0; i < 10; i++) {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/search',
        headers: { authorization: `Bearer ${key}` },
        payload: { query: 'lighthouse lenses', search_method: 'chunk_vector_search', limit: 10 },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(new Set((res.json().results as SearchResultItem[]).map((r) => r.memo_uuid))).toEqual(new Set(ids));
    }

    const metrics = await collectMetrics(stack.nc, ['indexer'], 500);
    const total = (instance: string, name: string) => counter(metrics, 'indexer', name).get(instance);
    expect(metrics.map((m) => m.instance).sort()).toEqual(['ingest-only', 'search-only']);
    expect(total('search-only', 'memex_queries_total')).toBeGreaterThanOrEqual(10);
    expect(total('search-only', 'memex_consumer_messages_total')).toBe(0);
    expect(total('search-only', 'memex_revisions_indexed_total')).toBe(0);
    expect(total('ingest-only', 'memex_queries_total')).toBe(0);
    expect(total('ingest-only', 'memex_revisions_indexed_total')).toBe(6);
  });
});
