/**
 * The search index contract: every adapter runs this suite (embedded always; Qdrant when reachable).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesFilters, type Filter, type MemoAttributes } from '@memex/contracts';
import { chunkId } from '@memex/runtime';
import { filterCases, generateFilterMemos, seededRandom } from '@memex/testing';
import { encodeQuery, idf, termFrequencies } from '@memex/text';
import { attrs } from '../testing/memos';
import type { IndexedChunk, SearchIndex } from './port';

interface SearchIndexFixture {
  index: SearchIndex;
  dispose(): Promise<void>;
}

const DIM = 8;

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function randomUnit(random: () => number): Float32Array {
  return unit(Array.from({ length: DIM }, () => random() * 2 - 1));
}

function chunk(memoId: string, revision: number, index: number, content: string, dense: Float32Array): IndexedChunk {
  return { chunkId: chunkId(memoId, revision, index), index, content, dense, terms: termFrequencies(content) };
}

export function searchIndexContract(name: string, setup: () => Promise<SearchIndexFixture>): void {
  describe(`search index contract: ${name}`, () => {
    let fixture: SearchIndexFixture;
    let index: SearchIndex;
    const model = `test-model-${randomUUID().slice(0, 8)}`;
    const q = (projectId: string, filters: Filter[] = [], limit = 100) => ({ projectId, filters, limit });

    beforeAll(async () => {
      fixture = await setup();
      index = fixture.index;
      await index.openModel(model, DIM);
    });
    afterAll(async () => {
      await index?.dropModel(model).catch(() => undefined);
      await fixture?.dispose();
    });

    /** Adds a memo with one chunk at revision 1 (catalog first unless told otherwise). */
    async function addMemo(projectId: string, content: string, dense: Float32Array, over: Partial<MemoAttributes> = {}) {
      const memoId = randomUUID();
      const memo = attrs(projectId, memoId, over);
      await index.applyCatalog({ memoId, projectId, version: 1, memo });
      await index.putChunks(model, { memoId, projectId, revision: memo.revision }, [chunk(memoId, memo.revision, 0, content, dense)]);
      return memoId;
    }

    it('keeps the newest catalog version and ignores older ones', async () => {
      const p = randomUUID();
      const m = randomUUID();
      expect(await index.applyCatalog({ memoId: m, projectId: p, version: 2, memo: attrs(p, m, { title: 'two' }) })).toBe(true);
      expect(await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m, { title: 'one' }) })).toBe(false);
      expect(await index.applyCatalog({ memoId: m, projectId: p, version: 2, memo: attrs(p, m, { title: 'again' }) })).toBe(false);
      expect((await index.getCatalog(m))?.memo?.title).toBe('two');
      expect(await index.applyCatalog({ memoId: m, projectId: p, version: 3, memo: attrs(p, m, { title: 'three' }) })).toBe(true);
      expect(await index.getCatalog(m)).toMatchObject({ memoId: m, projectId: p, version: 3, memo: { title: 'three' } });
      expect(await index.getCatalog(randomUUID())).toBeUndefined();
    });

    it('finds chunks by cosine similarity, best first, with memo title and summary', async () => {
      const p = randomUUID();
      const target = unit([1, 0, 0, 0, 0, 0, 0, 0]);
      const near = await addMemo(p, 'near', unit([0.9, 0.1, 0, 0, 0, 0, 0, 0]), { title: 'Near', summary: 'Close.' });
      const far = await addMemo(p, 'far', unit([0, 1, 0, 0, 0, 0, 0, 0]));
      const exact = await addMemo(p, 'exact', target);
      const hits = await index.searchDense(model, target, q(p));
      expect(hits.map((h) => h.memoId)).toEqual([exact, near, far]);
      expect(hits[0]!.score).toBeCloseTo(1, 5);
      expect(hits[2]!.score).toBeCloseTo(0, 5);
      expect(hits[1]).toMatchObject({ memoTitle: 'Near', memoSummary: 'Close.', content: 'near', chunkIndex: 0 });
      expect(hits[1]!.chunkId).toBe(chunkId(near, 1, 0));
      expect(await index.searchDense(model, target, q(p, [], 2))).toHaveLength(2);
    });

    it('ranks lexically with BM25: stored weight times the collection IDF', async () => {
      const p = randomUUID();
      const v = unit([0, 0, 1, 0, 0, 0, 0, 0]);
      const a = await addMemo(p, 'the turbine blade cracked', v);
      const b = await addMemo(p, 'blade of grass', v);
      await addMemo(p, 'nothing relevant here', v);
      const hits = await index.searchSparse(model, encodeQuery('turbine blade'), q(p));
      expect(hits.map((h) => h.memoId)).toEqual([a, b]);
      // A term only one chunk of this project has weighs more than one two share.
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect(hits.every((h) => h.score > 0)).toBe(true);
      expect(idf(10, 1)).toBeGreaterThan(idf(10, 2));
      expect(await index.searchSparse(model, encodeQuery('absent words entirely'), q(p))).toEqual([]);
    });

    it('never returns another project\'s chunks', async () => {
      const mine = randomUUID();
      const theirs = randomUUID();
      const v = unit([0, 0, 0, 1, 0, 0, 0, 0]);
      const own = await addMemo(mine, 'shared secret words', v);
      await addMemo(theirs, 'shared secret words', v);
      await addMemo(theirs, 'shared secret words again', v);
      expect((await index.searchDense(model, v, q(mine))).map((h) => h.memoId)).toEqual([own]);
      expect((await index.searchSparse(model, encodeQuery('shared secret'), q(mine))).map((h) => h.memoId)).toEqual([own]);
      expect(await index.searchDense(model, v, q(randomUUID()))).toEqual([]);
    });

    it('stores chunks ahead of the catalog but finds them only once it knows the memo', async () => {
      const p = randomUUID();
      const m = randomUUID();
      const v = unit([0, 0, 0, 0, 1, 0, 0, 0]);
      expect(await index.putChunks(model, { memoId: m, projectId: p, revision: 1 }, [chunk(m, 1, 0, 'early bird', v)])).toBe(true);
      expect(await index.searchDense(model, v, q(p))).toEqual([]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
      expect((await index.searchDense(model, v, q(p))).map((h) => h.memoId)).toEqual([m]);
    });

    it('refuses chunks of an outdated revision or a deleted memo', async () => {
      const p = randomUUID();
      const m = randomUUID();
      const v = unit([0, 0, 0, 0, 0, 1, 0, 0]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 3, memo: attrs(p, m, { revision: 2 }) });
      expect(await index.putChunks(model, { memoId: m, projectId: p, revision: 1 }, [chunk(m, 1, 0, 'old', v)])).toBe(false);
      expect(await index.searchDense(model, v, q(p))).toEqual([]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 4, memo: null });
      expect(await index.putChunks(model, { memoId: m, projectId: p, revision: 2 }, [chunk(m, 2, 0, 'late', v)])).toBe(false);
      expect(await index.searchDense(model, v, q(p))).toEqual([]);
    });

    it('hides the old revision\'s chunks as soon as the catalog has a new one', async () => {
      const p = randomUUID();
      const v = unit([0, 0, 0, 0, 0, 0, 1, 0]);
      const m = await addMemo(p, 'first version text', v);
      await index.applyCatalog({ memoId: m, projectId: p, version: 2, memo: attrs(p, m, { revision: 2 }) });
      expect(await index.searchDense(model, v, q(p))).toEqual([]);
      expect(await index.searchSparse(model, encodeQuery('first version'), q(p))).toEqual([]);
      await index.putChunks(model, { memoId: m, projectId: p, revision: 2 }, [chunk(m, 2, 0, 'second version text', v)]);
      const hits = await index.searchDense(model, v, q(p));
      expect(hits.map((h) => [h.memoId, h.content])).toEqual([[m, 'second version text']]);
      expect(hits[0]!.chunkId).toBe(chunkId(m, 2, 0));
    });

    it('replaces a revision\'s chunks when they are put again (redelivery, fewer chunks)', async () => {
      const p = randomUUID();
      const m = randomUUID();
      const v = unit([0, 0, 0, 0, 0, 0, 0, 1]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
      await index.putChunks(model, { memoId: m, projectId: p, revision: 1 }, [chunk(m, 1, 0, 'a', v), chunk(m, 1, 1, 'b', v), chunk(m, 1, 2, 'c', v)]);
      await index.putChunks(model, { memoId: m, projectId: p, revision: 1 }, [chunk(m, 1, 0, 'a', v), chunk(m, 1, 1, 'b', v), chunk(m, 1, 2, 'c', v)]);
      expect(await index.countChunks(model, p)).toBe(3);
      await index.putChunks(model, { memoId: m, projectId: p, revision: 1 }, [chunk(m, 1, 0, 'a', v)]);
      expect(await index.countChunks(model, p)).toBe(1);
    });

    it('gives back a memo\'s stored chunk texts in order', async () => {
      const p = randomUUID();
      const m = randomUUID();
      const v = unit([1, 0, 1, 0, 0, 0, 0, 0]);
      expect(await index.getChunks(model, m)).toEqual([]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
      await index.putChunks(model, { memoId: m, projectId: p, revision: 1 }, [chunk(m, 1, 1, 'second', v), chunk(m, 1, 0, 'first', v)]);
      expect(await index.getChunks(model, m)).toEqual([
        { chunkId: chunkId(m, 1, 0), revision: 1, index: 0, content: 'first' },
        { chunkId: chunkId(m, 1, 1), revision: 1, index: 1, content: 'second' },
      ]);
    });

    it('forgets a deleted memo everywhere and keeps it forgotten', async () => {
      const p = randomUUID();
      const v = unit([1, 1, 0, 0, 0, 0, 0, 0]);
      const m = await addMemo(p, 'to be deleted', v);
      expect(await index.applyCatalog({ memoId: m, projectId: p, version: 9, memo: null })).toBe(true);
      expect(await index.searchDense(model, v, q(p))).toEqual([]);
      expect(await index.searchSparse(model, encodeQuery('deleted'), q(p))).toEqual([]);
      expect(await index.countChunks(model, p)).toBe(0);
      expect(await index.getChunks(model, m)).toEqual([]);
      expect(await index.applyCatalog({ memoId: m, projectId: p, version: 8, memo: attrs(p, m) })).toBe(false);
      expect((await index.getCatalog(m))?.memo).toBeNull();
    });

    it('applies catalog updates and chunks of several memos at once as one by one, in order', async () => {
      const p = randomUUID();
      const [a, b, gone] = [randomUUID(), randomUUID(), randomUUID()];
      const v = unit([1, 0, 0, 0, 1, 0, 0, 0]);
      await index.applyCatalog({ memoId: gone, projectId: p, version: 5, memo: null });
      expect(
        await index.applyCatalogs([
          { memoId: a, projectId: p, version: 1, memo: attrs(p, a, { title: 'first' }) },
          { memoId: b, projectId: p, version: 1, memo: attrs(p, b) },
          // Later in the same batch: newer wins, older is refused, the deleted memo stays deleted.
          { memoId: a, projectId: p, version: 2, memo: attrs(p, a, { title: 'second', revision: 2 }) },
          { memoId: a, projectId: p, version: 1, memo: attrs(p, a, { title: 'stale' }) },
          { memoId: gone, projectId: p, version: 6, memo: attrs(p, gone) },
        ]),
      ).toEqual([true, true, true, false, false]);
      expect((await index.getCatalog(a))?.memo?.title).toBe('second');
      expect(
        await index.putChunksOfMemos(model, [
          { memo: { memoId: a, projectId: p, revision: 1 }, chunks: [chunk(a, 1, 0, 'outdated revision', v)] },
          { memo: { memoId: a, projectId: p, revision: 2 }, chunks: [chunk(a, 2, 0, 'alpha text', v), chunk(a, 2, 1, 'more alpha', v)] },
          { memo: { memoId: b, projectId: p, revision: 1 }, chunks: [chunk(b, 1, 0, 'beta text', v)] },
          { memo: { memoId: gone, projectId: p, revision: 1 }, chunks: [chunk(gone, 1, 0, 'erased text', v)] },
        ]),
      ).toEqual([false, true, true, false]);
      expect(await index.countChunks(model, p)).toBe(3);
      expect((await index.searchSparse(model, encodeQuery('alpha beta erased outdated'), q(p))).map((h) => h.content).sort()).toEqual([
        'alpha text',
        'beta text',
        'more alpha',
      ]);
      expect(await index.applyCatalogs([])).toEqual([]);
      expect(await index.putChunksOfMemos(model, [])).toEqual([]);
    });

    it('hides archived memos and shows them again when unarchived', async () => {
      const p = randomUUID();
      const v = unit([0, 1, 1, 0, 0, 0, 0, 0]);
      const m = await addMemo(p, 'expiring content', v);
      await index.applyCatalog({ memoId: m, projectId: p, version: 2, memo: attrs(p, m, { archived: true }) });
      expect(await index.searchDense(model, v, q(p))).toEqual([]);
      expect(await index.searchSparse(model, encodeQuery('expiring'), q(p))).toEqual([]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 3, memo: attrs(p, m, { archived: false }) });
      expect((await index.searchDense(model, v, q(p))).map((h) => h.memoId)).toEqual([m]);
    });

    it('applies attribute changes to filters at once', async () => {
      const p = randomUUID();
      const v = unit([0, 0, 1, 1, 0, 0, 0, 0]);
      const m = await addMemo(p, 'plain words', v, { title: 'Old title' });
      const byTitle: Filter[] = [{ field: 'title', operator: 'eq', value: 'New title', filter_type: 'native_field' }];
      expect(await index.searchDense(model, v, q(p, byTitle))).toEqual([]);
      await index.applyCatalog({ memoId: m, projectId: p, version: 2, memo: attrs(p, m, { title: 'New title' }) });
      expect((await index.searchDense(model, v, q(p, byTitle))).map((h) => h.memoTitle)).toEqual(['New title']);
    });

    it('applies every filter exactly, before ranking, in both rankings', async () => {
      const p = randomUUID();
      const random = seededRandom(11);
      const memos = generateFilterMemos(60, 5);
      const ids = new Map<string, (typeof memos)[number]>();
      const probe = randomUnit(random);
      for (const m of memos) {
        const id = await addMemo(p, 'common words everywhere', randomUnit(random), {
          title: m.title,
          source: m.source,
          clientReferenceId: m.clientReferenceId,
          tags: [...m.tags],
          metadata: m.metadata,
        });
        ids.set(id, m);
      }
      for (const { name, filters } of filterCases(memos)) {
        const expected = [...ids.entries()].filter(([, m]) => matchesFilters(m, filters)).map(([id]) => id).sort();
        const dense = await index.searchDense(model, probe, q(p, filters, 1_000));
        expect(dense.map((h) => h.memoId).sort(), `dense: ${name}`).toEqual(expected);
        const sparse = await index.searchSparse(model, encodeQuery('common words'), q(p, filters, 1_000));
        expect(sparse.map((h) => h.memoId).sort(), `sparse: ${name}`).toEqual(expected);
      }
      // A selective filter still yields its match even when it ranks last overall.
      const worst = (await index.searchDense(model, probe, q(p, [], 1_000))).at(-1)!;
      const only: Filter[] = [{ field: 'title', operator: 'eq', value: worst.memoTitle, filter_type: 'native_field' }];
      const filtered = await index.searchDense(model, probe, q(p, only, 1));
      expect(filtered.map((h) => h.memoId)).toEqual([worst.memoId]);
    });

    it('orders equal scores by memo uuid, then chunk index, in both rankings and at the cut', async () => {
      const p = randomUUID();
      const v = unit([1, 0, 0, 1, 0, 0, 0, 0]);
      const memoIds: string[] = [];
      for (let m = 0; m < 6; m++) {
        const memoId = randomUUID();
        memoIds.push(memoId);
        await index.applyCatalog({ memoId, projectId: p, version: 1, memo: attrs(p, memoId) });
        // Chunks put in reverse order, identical text and vector: only the tie-break orders them.
        await index.putChunks(model, { memoId, projectId: p, revision: 1 }, [
          chunk(memoId, 1, 1, 'identical tied words', v),
          chunk(memoId, 1, 0, 'identical tied words', v),
        ]);
      }
      const expected = [...memoIds].sort().flatMap((m) => [`${m}#0`, `${m}#1`]);
      const key = (h: { memoId: string; chunkIndex: number }) => `${h.memoId}#${h.chunkIndex}`;
      expect((await index.searchDense(model, v, q(p))).map(key)).toEqual(expected);
      expect((await index.searchSparse(model, encodeQuery('tied words'), q(p))).map(key)).toEqual(expected);
      // At a cut among equals the first in that order are kept.
      expect((await index.searchDense(model, v, q(p, [], 5))).map(key)).toEqual(expected.slice(0, 5));
      expect((await index.searchSparse(model, encodeQuery('tied words'), q(p, [], 3))).map(key)).toEqual(expected.slice(0, 3));
    });

    it('scores a project by its own chunks alone: another project\'s ingestion changes no list or score', async () => {
      const mine = randomUUID();
      const theirs = randomUUID();
      const random = seededRandom(23);
      const words = ['engine', 'wing', 'flow', 'pressure', 'heat', 'boundary', 'layer', 'shock', 'wave', 'lift', 'drag', 'nozzle'];
      const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]!).join(' ');
      for (let m = 0; m < 25; m++) await addMemo(mine, text(4 + Math.floor(random() * 12)), randomUnit(random));
      const queries = Array.from({ length: 12 }, () => ({ sparse: encodeQuery(text(2)), dense: randomUnit(random) }));
      const snapshot = async () =>
        Promise.all(
          queries.map(async ({ sparse, dense }) => ({
            sparse: (await index.searchSparse(model, sparse, q(mine, [], 10))).map((h) => [h.chunkId, h.score]),
            dense: (await index.searchDense(model, dense, q(mine, [], 10))).map((h) => [h.chunkId, h.score]),
          })),
        );
      const before = await snapshot();
      expect(before.every((s) => s.sparse.length > 0 && s.dense.length === 10)).toBe(true);
      // Thousands of chunks in another project, over the same words with other frequencies and lengths.
      for (let m = 0; m < 40; m++) {
        const memoId = randomUUID();
        await index.applyCatalog({ memoId, projectId: theirs, version: 1, memo: attrs(theirs, memoId) });
        const chunks = Array.from({ length: 50 }, (_, i) => chunk(memoId, 1, i, `engine engine ${text(1 + Math.floor(random() * 60))}`, randomUnit(random)));
        await index.putChunks(model, { memoId, projectId: theirs, revision: 1 }, chunks);
      }
      expect(await index.countChunks(model, theirs)).toBe(2000);
      expect(await snapshot()).toEqual(before);
    });

    it('keeps models apart and drops one whole', async () => {
      const p = randomUUID();
      const other = `${model}-b`;
      await index.openModel(other, 4);
      const m = randomUUID();
      await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
      await index.putChunks(other, { memoId: m, projectId: p, revision: 1 }, [
        { chunkId: chunkId(m, 1, 0), index: 0, content: 'four dims', dense: unit([1, 0, 0, 0]), terms: termFrequencies('four dims') },
      ]);
      expect(await index.countChunks(other, p)).toBe(1);
      expect(await index.countChunks(model, p)).toBe(0);
      expect((await index.searchDense(other, unit([1, 0, 0, 0]), q(p))).map((h) => h.memoId)).toEqual([m]);
      await index.dropModel(other);
      expect(await index.countChunks(other, p)).toBe(0);
    });
  });
}
