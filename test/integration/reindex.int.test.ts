/**
 * Re-indexing to another model replays the event log into the new model while the old one serves,
 * keeps memos written meanwhile, switches atomically, then drops the old model's vectors.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, SearchResultItem } from '@memex/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import { loadIndexerConfig, startIndexerService, type IndexerService } from '@memex/indexer';
import { Streams } from '@memex/contracts';
import { IndexStateStore } from '@memex/runtime';
import { eventually, tempDir } from '@memex/testing';
import { REPO_ROOT } from '../support/paths';
import { exited, runTs, spawnTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

describe('re-index to another embedding model', () => {
  let stack: Stack;
  let models: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    // Two names for the built model: enough to exercise every step of a model switch.
    models = tempDir('memex-models-');
    mkdirSync(models.path, { recursive: true });
    symlinkSync(join(REPO_ROOT, 'models', 'memex-glove-100d'), join(models.path, 'memex-glove-100d'));
    symlinkSync(join(REPO_ROOT, 'models', 'memex-glove-100d'), join(models.path, 'glove-alias'));
    stack = await startStack({ extractor: true, env: { MEMEX_MODELS_DIR: models.path, MEMEX_RATE_LIMIT: '0' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    models?.remove();
  });

  it('switches when the replay is complete, losing nothing written meanwhile', async () => {
    const { key } = await stack.project();
    const headers = { authorization: `Bearer ${key}` };
    const create = async (i: number) => {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/memo',
        headers,
        payload: { title: `Memo ${i}`, content: `Report number ${i} about lighthouse keeper ${i} and the coastal fog.` },
      });
      return res.json().memo_uuid as string;
    };
    const processed = (id: string) =>
      eventually(async () => !((await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers })).json() as Memo).pending, 20_000);
    const before = await Promise.all(Array.from({ length: 30 }, (_, i) => create(i)));
    for (const id of before) await processed(id);
    // The bus kept nothing once every consumer had its messages: the replay reads the memo service's log.
    const jsm = await jetstreamManager(stack.nc);
    await eventually(async () => (await jsm.streams.info(Streams.memoEvents)).state.messages === 0, 20_000);

    const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--model', 'glove-alias'], stack.env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/re-index to glove-alias requested/);
    const during = await Promise.all(Array.from({ length: 5 }, (_, i) => create(100 + i)));

    const store = await IndexStateStore.open(stack.nc);
    await eventually(async () => {
      const { state } = await store.read();
      return state?.activeModel === 'glove-alias' && !state.reindex;
    }, 60_000, 100);
    for (const id of during) await processed(id);

    const hits = async () => {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/search',
        headers,
        payload: { query: 'lighthouse keeper coastal fog', search_method: 'chunk_vector_search', limit: 50 },
      });
      return (res.json().results as SearchResultItem[]).map((h) => h.memo_uuid);
    };
    expect((await hits()).sort()).toEqual([...before, ...during].sort());

    const db = new Database(join(stack.dataDir, 'indexer', 'index.db'), { readonly: true });
    const count = (model: string) => (db.prepare('SELECT COUNT(DISTINCT memo_id) AS n FROM chunks WHERE model = ?').get(model) as { n: number }).n;
    expect(count('glove-alias')).toBe(35);
    await eventually(() => count('memex-glove-100d') === 0, 10_000);
    db.close();
  }, 120_000);

  it('refuses at once, with the indexer\'s error, a model that cannot be loaded', async () => {
    const store = await IndexStateStore.open(stack.nc);
    const { state: before } = await store.read();
    const started = Date.now();
    const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--model', 'no-such-model', '--wait'], stack.env);
    expect(cli.code, cli.stdout).toBe(1);
    expect(cli.stderr).toMatch(/re-index to no-such-model refused: Embedding model "no-such-model" not found/);
    expect(Date.now() - started).toBeLessThan(30_000);
    const { state } = await store.read();
    expect(state?.activeModel).toBe(before?.activeModel);
    expect(state?.reindex).toBeUndefined();
    expect(state?.failed?.model).toBe('no-such-model');
    // Nothing keeps retrying it: the job is gone for every indexer.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await store.read()).state?.reindex).toBeUndefined();
  }, 60_000);

  it('never leaves a re-index to the active model pending', async () => {
    const store = await IndexStateStore.open(stack.nc);
    const active = (await store.read()).state!.activeModel;
    const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--model', active, '--wait'], stack.env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/already serves/);
    // A job naming the active model (as an older CLI could leave it, across restarts) is completed.
    await store.update((s) => ({ activeModel: s!.activeModel, reindex: { model: s!.activeModel, requestedAt: new Date().toISOString() } }));
    await eventually(async () => (await store.read()).state?.reindex === undefined, 15_000, 100);
    expect((await store.read()).state?.activeModel).toBe(active);
  }, 60_000);
});

describe('rebuild of a lost index', () => {
  let stack: Stack;
  let indexer: IndexerService | undefined;
  beforeAll(async () => {
    stack = await startStack({ indexer: false, extractor: true, env: { MEMEX_RATE_LIMIT: '0' } });
    indexer = await startIndexerService(loadIndexerConfig(stack.env), { instance: 'first' });
  }, 60_000);
  afterAll(async () => {
    await indexer?.stop();
    await stack?.stop();
  });

  it('replays the memo event log into the index it serves: catalog, chunks, erasures', async () => {
    const { key } = await stack.project();
    const headers = { authorization: `Bearer ${key}` };
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/memo',
        headers,
        payload: { title: `Survey ${i}`, content: `Tide gauge survey ${i} of the estuary mudflats and salt marsh.`, tags: [i % 2 ? 'odd' : 'even'] },
      });
      ids.push(res.json().memo_uuid as string);
    }
    for (const id of ids) {
      await eventually(async () => !((await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers })).json() as Memo).pending, 20_000);
    }
    const erased = ids.pop()!;
    expect((await stack.app.inject({ method: 'DELETE', url: `/api/v1/memo/${erased}`, headers })).statusCode).toBe(204);
    const search = async (filters?: unknown) => {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/search',
        headers,
        payload: { query: 'tide gauge estuary survey', search_method: 'chunk_vector_search', limit: 50, ...(filters ? { filters } : {}) },
      });
      expect(res.statusCode, res.body).toBe(200);
      return [...new Set((res.json().results as SearchResultItem[]).map((h) => h.memo_uuid))].sort();
    };
    await eventually(async () => (await search()).length === ids.length, 20_000);
    const jsm = await jetstreamManager(stack.nc);
    await eventually(async () => (await jsm.streams.info(Streams.memoEvents)).state.messages === 0, 20_000);

    // The index is lost: the indexer's files are gone, and the bus holds no copy of the log.
    await indexer!.stop();
    indexer = undefined;
    rmSync(join(stack.dataDir, 'indexer'), { recursive: true, force: true });
    indexer = await startIndexerService(loadIndexerConfig(stack.env), { instance: 'second' });
    expect(await search()).toEqual([]);

    const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--rebuild', '--wait'], stack.env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/rebuild of the memex-glove-100d index requested/);
    expect(cli.stdout).toMatch(/done: the index now serves memex-glove-100d/);
    expect(await search()).toEqual([...ids].sort());
    // The catalog came back too: filters work, and the erased memo stays erased.
    const odd = await search([{ field: 'tags', operator: 'in', value: ['odd'], filter_type: 'native_field' }]);
    expect(odd).toEqual(ids.filter((_, i) => i % 2 === 1).sort());
    expect(await search()).not.toContain(erased);
    expect((await IndexStateStore.open(stack.nc).then((s) => s.read())).state).toEqual({ activeModel: 'memex-glove-100d' });
  }, 120_000);
});

describe('memex reindex --wait when the indexer running the job stops reporting', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ indexer: false, env: { MEMEX_RATE_LIMIT: '0' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('says so instead of waiting without a word, and follows the job again once it reports', async () => {
    const store = await IndexStateStore.open(stack.nc);
    await store.update(() => ({ activeModel: 'memex-glove-100d' }));
    const cli = spawnTs('packages/cli/src/main.ts', ['reindex', '--rebuild', '--wait'], stack.env);
    let out = '';
    cli.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const code = exited(cli);
    try {
      await eventually(async () => (out.includes('waiting for an indexer to take the job') ? true : undefined), 30_000, 100);
      // An indexer took the job, replayed a tenth of the log and went quiet a minute ago.
      const quiet = new Date(Date.now() - 60_000).toISOString();
      await store.update((s) => (s?.reindex ? { ...s, reindex: { ...s.reindex, owner: 'indexer-gone', heartbeatAt: quiet, replayed: 10, total: 100 } } : undefined));
      await eventually(async () => (out.includes('no word from the indexer running the job (indexer-gone) for over 30 s') ? true : undefined), 15_000, 100);
      expect(out).not.toMatch(/replayed 10\/100/);
      // Another indexer takes over and reports: the CLI follows it to the end.
      await store.update((s) => (s?.reindex ? { ...s, reindex: { ...s.reindex, owner: 'indexer-new', heartbeatAt: new Date().toISOString(), replayed: 50 } } : undefined));
      await eventually(async () => (out.includes('replayed 50/100 of the log') ? true : undefined), 15_000, 100);
      await store.update((s) => (s ? { activeModel: s.activeModel } : undefined));
      expect(await code).toBe(0);
      expect(out).toMatch(/done: the index now serves memex-glove-100d/);
    } finally {
      cli.kill('SIGTERM');
    }
  }, 90_000);
});
