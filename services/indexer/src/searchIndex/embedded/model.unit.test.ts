import { describe, expect, it } from 'vitest';
import type { Filter } from '@memex/contracts';
import { seededRandom } from '@memex/testing';
import { encodeQuery, termFrequencies } from '@memex/text';
import { attrs } from '../../testing/memos';
import { encodeFloat16, readHalves } from '../../numeric/float16';
import { CatalogMemory } from './catalog';
import type { DenseSearchOptions } from './denseOptions';
import { ModelMemory } from './model';
import { memoOrderKey } from './slots';
import { compareChunks } from '../topK';

describe('ModelMemory', () => {
  it.each([
    ['scanning', {}],
    ['through an HNSW graph', { annMinChunks: 500, annMinShare: 0 }],
  ])('keeps finding the right chunks after many removals compact it (%s)', async (_, dense) => {
    const catalog = new CatalogMemory();
    const memory = new ModelMemory(2, 16, { dense });
    const memos = 6_000;
    for (let m = 0; m < memos; m++) {
      const memoId = `memo-${m}`;
      catalog.set({
        memoId,
        projectId: 'p',
        version: 1,
        memo: attrs('p', memoId, { title: `t${m}` }),
      });
      const text = m % 2 === 0 ? `even alpha ${m}` : `odd beta ${m}`;
      const angle = (m / memos) * Math.PI;
      memory.add(
        { chunkId: `c-${m}`, memoId, projectId: 'p', revision: 1, index: 0, content: text },
        Float32Array.from([Math.cos(angle), Math.sin(angle)]),
        termFrequencies(text),
      );
    }
    // Remove every memo but the multiples of 10: 5,400 dead slots, enough to compact.
    for (let m = 0; m < memos; m++) if (m % 10 !== 0) memory.removeMemo(`memo-${m}`);
    expect(memory.live).toBe(600);
    // Compaction renumbers the slots: the graph is rebuilt in the background, scans answer meanwhile.
    await memory.graphsBuilt();
    expect(memory.hasGraph('p')).toBe('annMinChunks' in dense);

    const eligible = catalog.eligible('p', []);
    expect(memory.count(eligible)).toBe(600);
    const nearest = memory.searchDense(Float32Array.from([1, 0]), eligible, 3, catalog, 'p');
    expect(nearest.map((h) => h.memoId)).toEqual(['memo-0', 'memo-10', 'memo-20']);
    const sparse = memory.searchSparse(encodeQuery('alpha'), 'p', eligible, 1_000, catalog);
    expect(sparse).toHaveLength(600);
    expect(sparse.every((h) => Number(h.memoId.slice(5)) % 10 === 0)).toBe(true);
    expect(memory.searchSparse(encodeQuery('beta'), 'p', eligible, 10, catalog)).toEqual([]);
    // It keeps working after compaction: new chunks and removals.
    memory.removeMemo('memo-0');
    expect(memory.searchDense(Float32Array.from([1, 0]), catalog.eligible('p', []), 1, catalog, 'p')[0]!.memoId).toBe('memo-10');
    expect(memory.searchDense(Float32Array.from([-1, 0]), catalog.eligible('p', []), 2, catalog, 'p').map((h) => h.memoId)).toEqual(['memo-5990', 'memo-5980']);
  });
});

describe('ModelMemory tie order', () => {
  it('memoOrderKey orders canonical uuids as their strings and marks any other id -1', () => {
    const random = seededRandom(11);
    const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
    // (a few shared heads: uuids whose first 48 bits agree, as v7 ids made in the same millisecond)
    const heads = Array.from({ length: 5 }, () => `${hex(8)}-${hex(4)}`);
    const ids = Array.from({ length: 400 }, (_, i) => `${i % 3 === 0 ? heads[i % 5]! : `${hex(8)}-${hex(4)}`}-7${hex(3)}-${hex(4)}-${hex(12)}`);
    for (let i = 0; i < ids.length; i++) {
      for (let j = 0; j < ids.length; j += 7) {
        const [a, b] = [memoOrderKey(ids[i]!), memoOrderKey(ids[j]!)];
        if (a !== b) expect(Math.sign(a - b), `${ids[i]} ${ids[j]}`).toBe(ids[i]! < ids[j]! ? -1 : 1);
      }
    }
    expect(memoOrderKey('ffffffff-ffff-7fff-bfff-ffffffffffff')).toBe(2 ** 48 - 1);
    expect(memoOrderKey('00000000-0000-7000-8000-000000000000')).toBe(0);
    for (const other of ['memo-1', 'ABCDEF01-2345-7000-8000-000000000000', 'abcdef01-2345', '', 'abcdef0-12345-']) expect(memoOrderKey(other)).toBe(-1);
  });

  it('orders equally scored chunks by memo id, then chunk, whatever form the ids take, in both rankings and after a compaction', () => {
    const random = seededRandom(3);
    const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
    const shared = `${hex(8)}-${hex(4)}`;
    // Canonical uuids (some sharing their first 48 bits), upper-case ones, and ids of another form.
    const memoId = (m: number) =>
      m % 5 === 0
        ? `${shared}-7${hex(3)}-8${hex(3)}-${hex(12)}`
        : m % 5 === 1
          ? `memo-${hex(6)}`
          : m % 5 === 2
            ? `${hex(8)}-${hex(4)}-7${hex(3)}-8${hex(3)}-${hex(12)}`.toUpperCase()
            : `${hex(8)}-${hex(4)}-7${hex(3)}-8${hex(3)}-${hex(12)}`;
    const fill = (memos: number) => {
      const catalog = new CatalogMemory();
      const memory = new ModelMemory(2, 16);
      const ids = Array.from({ length: memos }, (_, m) => memoId(m));
      for (const id of ids) {
        catalog.set({ memoId: id, projectId: 'p', version: 1, memo: attrs('p', id) });
        // Every chunk the same text and vector: every score ties, only the tie-break orders them.
        for (let c = 0; c < 2; c++) {
          memory.add({ chunkId: `${id}/${c}`, memoId: id, projectId: 'p', revision: 1, index: c, content: 'harbour crane' }, Float32Array.from([0.6, 0.8]), termFrequencies('harbour crane'));
        }
      }
      return { catalog, memory, ids };
    };
    const expected = (alive: string[]) => alive.flatMap((id) => [0, 1].map((chunkIndex) => ({ memoId: id, chunkIndex }))).sort(compareChunks).slice(0, 25);
    const pick = (hits: { memoId: string; chunkIndex: number }[]) => hits.map(({ memoId: id, chunkIndex }) => ({ memoId: id, chunkIndex }));

    // BM25, over enough memos that removing most of them compacts the memory (slots move, keys with them).
    const large = fill(6_000);
    const sparse = () => pick(large.memory.searchSparse(encodeQuery('crane'), 'p', large.catalog.eligible('p', []), 25, large.catalog));
    expect(sparse()).toEqual(expected(large.ids));
    const alive = large.ids.filter((_, m) => m % 4 === 0);
    for (const [m, id] of large.ids.entries()) if (m % 4 !== 0) large.memory.removeMemo(id);
    expect(sparse()).toEqual(expected(alive));

    // Dense, over fewer tied chunks than its scan passes on (beyond that, the scan keeps the lowest slots of a tie).
    const small = fill(100);
    expect(pick(small.memory.searchDense(Float32Array.from([0.6, 0.8]), small.catalog.eligible('p', []), 25, small.catalog, 'p'))).toEqual(expected(small.ids));
  });
});

describe('ModelMemory term statistics across removals and compaction', () => {
  it('scores BM25 as a memory holding only the survivors does', () => {
    const random = seededRandom(5);
    const texts = Array.from({ length: 6_000 }, () => randomText(random, VOCABULARY, 6 + Math.floor(random() * 20)));
    const survives = (m: number) => m % 10 === 0 && m % 30 !== 0; // removed: 5,400 (a compaction), then 200 after it
    const fill = (memory: ModelMemory, catalog: CatalogMemory, keep: (m: number) => boolean) => {
      texts.forEach((text, m) => {
        if (!keep(m)) return;
        const memoId = `memo-${m}`;
        catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId) });
        memory.add({ chunkId: `c-${m}`, memoId, projectId: 'p', revision: 1, index: 0, content: text }, Float32Array.from([1, 0]), termFrequencies(text));
      });
    };
    const catalog = new CatalogMemory();
    const churned = new ModelMemory(2, 16);
    fill(churned, catalog, () => true);
    for (let m = 0; m < texts.length; m++) if (m % 10 !== 0) churned.removeMemo(`memo-${m}`);
    for (let m = 0; m < texts.length; m += 30) churned.removeMemo(`memo-${m}`);
    const freshCatalog = new CatalogMemory();
    const fresh = new ModelMemory(2, 16);
    fill(fresh, freshCatalog, survives);
    expect(churned.live).toBe(fresh.live);
    for (const word of VOCABULARY.slice(0, 12)) {
      const query = encodeQuery(`${word} ${VOCABULARY[39]!}`);
      const scores = (memory: ModelMemory, cat: CatalogMemory) =>
        new Map(memory.searchSparse(query, 'p', cat.eligible('p', []), 50, cat).map((h) => [h.chunkId, h.score]));
      expect(scores(churned, catalog)).toEqual(scores(fresh, freshCatalog));
    }
  });
});

/** Texts over a small vocabulary, so terms repeat, postings are long and scores tie. */
function randomText(random: () => number, vocabulary: readonly string[], words: number): string {
  return Array.from({ length: words }, () => vocabulary[Math.floor(random() * random() * vocabulary.length)]!).join(' ');
}

const VOCABULARY = Array.from({ length: 40 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`);

function unitVector(random: () => number, dim: number, around?: Float32Array): Float32Array {
  const v = Float32Array.from({ length: dim }, (_, d) => (around ? around[d]! : 0) + (random() * 2 - 1) * (around ? 0.3 : 1));
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

describe('ModelMemory sparse top-k (MaxScore)', () => {
  it('equals scoring every posting, scores and order, over random corpora, queries, filters and limits', () => {
    const random = seededRandom(2024);
    for (let trial = 0; trial < 40; trial++) {
      const catalog = new CatalogMemory();
      const memory = new ModelMemory(2);
      const memos = 20 + Math.floor(random() * 200);
      for (let m = 0; m < memos; m++) {
        const memoId = `m-${Math.floor(random() * 1e9).toString(36)}-${m}`;
        const archived = random() < 0.1;
        catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId, { archived, title: random() < 0.3 ? 'red' : 'blue' }) });
        const chunks = 1 + Math.floor(random() * 3);
        for (let c = 0; c < chunks; c++) {
          // Some chunks repeat one text exactly, so their scores tie and only the tie-break orders them.
          const text = random() < 0.2 ? 'wordaax wordbax' : randomText(random, VOCABULARY, 1 + Math.floor(random() * 30));
          memory.add({ chunkId: `${memoId}/${c}`, memoId, projectId: 'p', revision: 1, index: c, content: text }, Float32Array.from([1, 0]), termFrequencies(text));
        }
        if (random() < 0.05) memory.removeMemo(memoId);
      }
      const filters: Filter[] = random() < 0.5 ? [] : [{ field: 'title', operator: 'eq', value: 'red', filter_type: 'native_field' }];
      const eligible = catalog.eligible('p', filters);
      for (let q = 0; q < 10; q++) {
        const query = encodeQuery(randomText(random, VOCABULARY, 1 + Math.floor(random() * 8)));
        const limit = 1 + Math.floor(random() * 30);
        const fast = memory.searchSparse(query, 'p', eligible, limit, catalog);
        const exhaustive = memory.searchSparseExhaustive(query, 'p', eligible, limit, catalog);
        expect(fast, `trial ${trial} query ${q}`).toEqual(exhaustive);
      }
    }
  });

  it('takes N, document frequency and average length from the caller\'s project alone', () => {
    const random = seededRandom(5);
    const catalog = new CatalogMemory();
    const memory = new ModelMemory(4);
    const addMemos = (projectId: string, n: number) => {
      for (let m = 0; m < n; m++) {
        const memoId = `${projectId}-${m}`;
        catalog.set({ memoId, projectId, version: 1, memo: attrs(projectId, memoId) });
        const text = randomText(random, VOCABULARY, 5 + Math.floor(random() * 40));
        memory.add({ chunkId: `${memoId}/0`, memoId, projectId, revision: 1, index: 0, content: text }, unitVector(random, 4), termFrequencies(text));
      }
    };
    addMemos('a', 50);
    const queries = Array.from({ length: 20 }, () => encodeQuery(randomText(random, VOCABULARY, 3)));
    const probe = unitVector(random, 4);
    const before = queries.map((q) => memory.searchSparse(q, 'a', catalog.eligible('a', []), 10, catalog));
    const denseBefore = memory.searchDense(probe, catalog.eligible('a', []), 10, catalog, 'a');
    addMemos('b', 3000);
    for (let m = 0; m < 1000; m++) memory.removeMemo(`b-${m}`);
    expect(queries.map((q) => memory.searchSparse(q, 'a', catalog.eligible('a', []), 10, catalog))).toEqual(before);
    expect(memory.searchDense(probe, catalog.eligible('a', []), 10, catalog, 'a')).toEqual(denseBefore);
    expect(before.flat().length).toBeGreaterThan(100);
  });
});

describe('ModelMemory dense search with an HNSW graph', () => {
  const dim = 32;
  function build(annMinChunks: number, memos = 3000, dense: Partial<DenseSearchOptions> = {}) {
    const random = seededRandom(77);
    const centres = Array.from({ length: 20 }, () => unitVector(random, dim));
    const catalog = new CatalogMemory();
    const memory = new ModelMemory(dim, 1024, { dense: { annMinChunks, ...dense } });
    const addMemo = (m: number) => {
      const memoId = `memo-${String(m).padStart(5, '0')}`;
      catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId, { title: m % 10 === 0 ? 'rare' : 'common' }) });
      const v = unitVector(random, dim, centres[m % centres.length]);
      memory.add({ chunkId: `${memoId}/0`, memoId, projectId: 'p', revision: 1, index: 0, content: '' }, v, termFrequencies('x'));
    };
    for (let m = 0; m < memos; m++) addMemo(m);
    return { memory, catalog, addMemo, queries: Array.from({ length: 50 }, (_, i) => unitVector(random, dim, centres[i % centres.length])) };
  }

  it('uses the graph for a large project and finds what an exact scan finds (recall@10 >= 0.95)', async () => {
    const graph = build(1000);
    const exact = build(1_000_000);
    await graph.memory.graphsBuilt();
    expect(graph.memory.hasGraph('p')).toBe(true);
    expect(exact.memory.hasGraph('p')).toBe(false);
    let found = 0;
    for (const q of graph.queries) {
      const truth = new Set(exact.memory.searchDense(q, exact.catalog.eligible('p', []), 10, exact.catalog, 'p').map((h) => h.chunkId));
      const hits = graph.memory.searchDense(q, graph.catalog.eligible('p', []), 10, graph.catalog, 'p');
      expect(hits).toHaveLength(10);
      // Scores are rescored cosines, best first.
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
      found += hits.filter((h) => truth.has(h.chunkId)).length;
    }
    expect(found / (10 * graph.queries.length)).toBeGreaterThanOrEqual(0.95);
  });

  it('scans with SIMD what a JS loop finds, beside another project, with filters and removals', () => {
    // The same chunks twice: one memory scans with the native SIMD scan (over just the findable slots
    // once filters or removals leave some out), the other in a JS loop.
    const simd = build(1_000_000, 6000);
    const loop = build(1_000_000, 6000, { simdScanMinChunks: Number.POSITIVE_INFINITY });
    for (const { memory } of [simd, loop]) {
      for (let m = 0; m < 1500; m++) {
        memory.add({ chunkId: `other-${m}`, memoId: `other-${m}`, projectId: 'other', revision: 1, index: 0, content: '' }, unitVector(seededRandom(m), dim), termFrequencies('x'));
      }
      for (let m = 0; m < 6000; m += 7) memory.removeMemo(`memo-${String(m).padStart(5, '0')}`);
    }
    const rare: Filter[] = [{ field: 'title', operator: 'eq', value: 'rare', filter_type: 'native_field' }];
    let same = 0;
    let total = 0;
    for (const q of simd.queries) {
      for (const filters of [[], rare]) {
        const a = simd.memory.searchDense(q, simd.catalog.eligible('p', filters), 10, simd.catalog, 'p');
        const b = loop.memory.searchDense(q, loop.catalog.eligible('p', filters), 10, loop.catalog, 'p');
        expect(a).toHaveLength(10);
        // Neither the other project's chunks nor removed ones.
        expect(a.every((h) => h.memoId.startsWith('memo-') && Number(h.memoId.slice(5)) % 7 !== 0)).toBe(true);
        if (filters.length > 0) expect(a.every((h) => Number(h.memoId.slice(5)) % 10 === 0)).toBe(true);
        same += a.filter((h, i) => h.chunkId === b[i]!.chunkId).length;
        total += a.length;
      }
    }
    expect(same / total).toBeGreaterThanOrEqual(0.99);
  });

  it.each([
    ['inner product, plus the few shrunk', 10],
    ['cosine, with many shrunk', 200],
  ])('scans by %s: vectors with an outsized component are found as a JS loop finds them', (_, spiky) => {
    // 64 dimensions: codes share one norm, and a component above ~0.5 of the norm shrinks a vector's.
    // The query is spread over 8 dimensions; 600 decoys sit at cosine ~0.8 to it, and the `spiky`
    // vectors, one large component, at ~0.86: their shrunk codes rank below every decoy by inner
    // product, beyond the scan's few hundred candidates, unless the scan makes up for them.
    const dim = 64;
    const random = seededRandom(11);
    const query = Float32Array.from({ length: dim }, (_, d) => (d < 8 ? 1 / Math.sqrt(8) : 0));
    const normalize = (v: Float32Array) => v.map((x) => x / Math.hypot(...v));
    const decoy = () => {
      // cosine 0.8 exactly: the query plus noise orthogonal to it
      const noise = unitVector(random, dim);
      const along = noise.reduce((sum, x, d) => sum + x * query[d]!, 0);
      const orthogonal = normalize(noise.map((x, d) => x - along * query[d]!));
      return query.map((q, d) => 0.8 * q + 0.6 * orthogonal[d]!);
    };
    const spike = () => normalize(Float32Array.from({ length: dim }, (_, d) => (d === 0 ? 1 : d < 8 ? 0.3 : 0) + (random() - 0.5) * 0.02));
    const vectors = [
      ...Array.from({ length: 3000 }, () => unitVector(random, dim)),
      ...Array.from({ length: 600 }, decoy),
      ...Array.from({ length: spiky }, spike),
    ];
    const found = ({ simdScanMinChunks = undefined as number | undefined, compacted = false } = {}) => {
      const catalog = new CatalogMemory();
      const memory = new ModelMemory(dim, 1024, { dense: simdScanMinChunks === undefined ? {} : { simdScanMinChunks } });
      const add = (memoId: string, v: Float32Array) => {
        catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId) });
        memory.add({ chunkId: `${memoId}/0`, memoId, projectId: 'p', revision: 1, index: 0, content: '' }, v, termFrequencies('x'));
      };
      // Compacted: 5,000 chunks first, removed once the others are in, so every slot moves down.
      if (compacted) for (let m = 0; m < 5000; m++) add(`gone-${m}`, unitVector(random, dim));
      vectors.forEach((v, m) => add(`memo-${String(m).padStart(5, '0')}`, v));
      if (compacted) for (let m = 0; m < 5000; m++) memory.removeMemo(`gone-${m}`);
      return memory.searchDense(query, catalog.eligible('p', []), 10, catalog, 'p').map((h) => h.memoId);
    };
    const simd = found();
    expect(simd.every((id) => Number(id.slice(5)) >= 3600)).toBe(true);
    expect(simd).toEqual(found({ simdScanMinChunks: Number.POSITIVE_INFINITY }));
    expect(found({ compacted: true })).toEqual(simd);
  });

  it('answers a selective filter exactly and forgets removed chunks in the graph', async () => {
    const { memory, catalog, queries } = build(1000);
    await memory.graphsBuilt();
    const rare: Filter[] = [{ field: 'title', operator: 'eq', value: 'rare', filter_type: 'native_field' }];
    const hits = memory.searchDense(queries[0]!, catalog.eligible('p', rare), 1000, catalog, 'p');
    expect(hits).toHaveLength(300);
    const best = memory.searchDense(queries[0]!, catalog.eligible('p', []), 1, catalog, 'p')[0]!;
    memory.removeMemo(best.memoId);
    const after = memory.searchDense(queries[0]!, catalog.eligible('p', []), 50, catalog, 'p');
    expect(after.map((h) => h.memoId)).not.toContain(best.memoId);
    expect(after).toHaveLength(50);
  });

  it('builds the graph in slices between other work, with the chunks added and removed meanwhile', async () => {
    const { memory, catalog, addMemo, queries } = build(1000, 999);
    const exact = build(1_000_000, 999);
    expect(memory.hasGraph('p')).toBe(false);
    addMemo(999); // the 1,000th chunk: a build starts, and this call returns before it is done
    exact.addMemo(999);
    const search = (m: typeof memory, c: CatalogMemory, q: Float32Array) => m.searchDense(q, c.eligible('p', []), 10, c, 'p').map((h) => h.chunkId);
    let turns = 0;
    let removed: string | undefined;
    // Other work between the slices: searches (answered by scanning, so exactly), adds and removals.
    while (!memory.hasGraph('p')) {
      turns += 1;
      const q = queries[turns % queries.length]!;
      expect(search(memory, catalog, q)).toEqual(search(exact.memory, exact.catalog, q));
      if (turns === 2) {
        for (let m = 1000; m < 1100; m++) {
          addMemo(m);
          exact.addMemo(m);
        }
        removed = search(memory, catalog, queries[0]!)[0]!;
        memory.removeMemo(removed.split('/')[0]!);
        exact.memory.removeMemo(removed.split('/')[0]!);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(turns).toBeGreaterThan(2);
    await memory.graphsBuilt();
    let found = 0;
    for (const q of queries) {
      const hits = search(memory, catalog, q);
      expect(hits).not.toContain(removed);
      const truth = new Set(search(exact.memory, exact.catalog, q));
      found += hits.filter((id) => truth.has(id)).length;
    }
    expect(found / (10 * queries.length)).toBeGreaterThanOrEqual(0.95);
    // The graph holds exactly the live chunks: those added during the build, not the removed one.
    expect(memory.live).toBe(1099);
    const snapshot = memory.graphSnapshot('p')!;
    expect(snapshot.count).toBe(1099);
    expect(snapshot.chunkIds).not.toContain(removed);
  });

  it('rescores only the best exactTop (+ margin) from disk, and their order is the full rescoring\'s', () => {
    const random = seededRandom(5);
    const catalog = new CatalogMemory();
    const vectors = new Map<string, Float32Array>();
    let reads = 0;
    const memory = new ModelMemory(dim, 1024, { fullVectors: (chunks) => ((reads += chunks.length), new Map(chunks.flatMap(({ chunkId: id }) => (vectors.has(id) ? [[id, vectors.get(id)!]] : [])))) });
    for (let m = 0; m < 500; m++) {
      const memoId = `memo-${String(m).padStart(4, '0')}`;
      catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId) });
      const v = unitVector(random, dim);
      vectors.set(`${memoId}/0`, v);
      memory.add({ chunkId: `${memoId}/0`, memoId, projectId: 'p', revision: 1, index: 0, content: '' }, v, termFrequencies('x'));
    }
    const q = unitVector(random, dim);
    const eligible = catalog.eligible('p', []);
    const all = memory.searchDense(q, eligible, 100, catalog, 'p');
    expect(reads).toBe(100 + memory.denseOptions.rescoreMargin);
    reads = 0;
    const some = memory.searchDense(q, eligible, 100, catalog, 'p', 10);
    expect(reads).toBe(10 + memory.denseOptions.rescoreMargin);
    expect(some).toHaveLength(100);
    expect(some.slice(0, 10)).toEqual(all.slice(0, 10));
  });

  it('keeps rescoring vectors once read, within its byte budget, and forgets a chunk that changes', () => {
    const random = seededRandom(9);
    const catalog = new CatalogMemory();
    const vectors = new Map<string, Float32Array>();
    const read: string[] = [];
    const budget = 40; // vectors kept at most
    const memory = new ModelMemory(dim, 1024, {
      vectorCacheBytes: budget * dim * 4,
      fullVectors: (chunks) => (read.push(...chunks.map((c) => c.chunkId)), new Map(chunks.map(({ chunkId: id }) => [id, vectors.get(id)!]))),
    });
    const put = (m: number, v: Float32Array) => {
      const memoId = `memo-${String(m).padStart(4, '0')}`;
      catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId) });
      vectors.set(`${memoId}/0`, v);
      memory.add({ chunkId: `${memoId}/0`, memoId, projectId: 'p', revision: 1, index: 0, content: '' }, v, termFrequencies('x'));
    };
    for (let m = 0; m < 500; m++) put(m, unitVector(random, dim));
    const q = unitVector(random, dim);
    const search = (limit = 10) => memory.searchDense(q, catalog.eligible('p', []), limit, catalog, 'p');
    const rescored = 10 + memory.denseOptions.rescoreMargin;

    const first = search();
    expect(read).toHaveLength(rescored);
    read.length = 0;
    expect(search()).toEqual(first);
    expect(read).toEqual([]);

    // The best chunk's memo is written again, its chunk now the query itself: read anew, scored anew.
    const best = first[0]!;
    memory.removeMemo(best.memoId);
    put(Number(best.memoId.slice(5)), q);
    const after = search();
    expect(read).toEqual([best.chunkId]);
    expect(after[0]!.chunkId).toBe(best.chunkId);
    expect(after[0]!.score).toBeCloseTo(1, 6);
    expect(best.score).toBeLessThan(0.9);
    expect(after.slice(1)).toEqual(first.slice(1));

    // Past the budget the least recently used go: a wider search, then the first one reads again.
    search(100);
    read.length = 0;
    search();
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThanOrEqual(rescored);
  });

  it('rescores with vectors read as stored halves as with floats, and keeps twice as many of them in the same budget', () => {
    const random = seededRandom(13);
    const catalog = new CatalogMemory();
    const vectors = new Map<string, Float32Array>();
    const reads = { floats: 0, halves: 0 };
    const budget = 40; // float vectors the budget holds
    const floats = new ModelMemory(dim, 1024, {
      vectorCacheBytes: budget * dim * 4,
      fullVectors: (chunks) => ((reads.floats += chunks.length), new Map(chunks.map(({ chunkId: id }) => [id, vectors.get(id)!]))),
    });
    const halves = new ModelMemory(dim, 1024, {
      vectorCacheBytes: budget * dim * 4,
      fullVectors: (chunks) => ((reads.halves += chunks.length), new Map(chunks.map(({ chunkId: id }) => [id, readHalves(encodeFloat16(vectors.get(id)!))]))),
    });
    for (let m = 0; m < 500; m++) {
      const memoId = `memo-${String(m).padStart(4, '0')}`;
      catalog.set({ memoId, projectId: 'p', version: 1, memo: attrs('p', memoId) });
      const v = unitVector(random, dim);
      vectors.set(`${memoId}/0`, v);
      for (const memory of [floats, halves]) memory.add({ chunkId: `${memoId}/0`, memoId, projectId: 'p', revision: 1, index: 0, content: '' }, v, termFrequencies('x'));
    }
    // Queries whose rescored chunks (26 each) together exceed the float budget but fit twice it.
    const queries = [0, 1, 2].map(() => unitVector(random, dim));
    const firstRound = { floats: 0, halves: 0 };
    for (const round of [1, 2]) {
      for (const q of queries) {
        const a = floats.searchDense(q, catalog.eligible('p', []), 10, catalog, 'p');
        const b = halves.searchDense(q, catalog.eligible('p', []), 10, catalog, 'p');
        expect(b.map((h) => h.chunkId)).toEqual(a.map((h) => h.chunkId));
        b.forEach((h, i) => expect(Math.abs(h.score - a[i]!.score)).toBeLessThan(2e-3));
      }
      if (round === 1) Object.assign(firstRound, reads);
    }
    // The second round finds every half kept; the floats had to be read again.
    expect(reads.halves).toBe(firstRound.halves);
    expect(reads.floats).toBeGreaterThan(firstRound.floats);
    expect(halves.vectorsRead).toBe(reads.halves);
  });
});

describe('findable chunks kept current', () => {
  it('after any sequence of writes, revisions, archiving, filter changes, moves, removals and compactions, finds what a fresh catalog and memory find', () => {
    // One catalog and memory live through every change, their eligible sets and findable slots
    // caught up as they go; each check compares them with a catalog and memory built from scratch.
    const random = seededRandom(21);
    const dim = 4;
    const catalog = new CatalogMemory();
    const memory = new ModelMemory(dim, 16);
    // What the catalog says of each memo, and which of its chunks the memory holds (`indexed`).
    const state = new Map<string, { projectId: string; revision: number; title: string; archived: boolean; deleted: boolean; chunks: number; indexed?: { projectId: string; revision: number; chunks: number } }>();
    const vector = (m: number, i: number) => Float32Array.from({ length: dim }, (_, d) => Math.sin(m * 7 + i * 3 + d));
    let catalogWrites = 0;
    const write = (memoId: string) => {
      catalogWrites += 1;
      const s = state.get(memoId)!;
      catalog.set({ memoId, projectId: s.projectId, version: 1, memo: s.deleted ? null : attrs(s.projectId, memoId, { revision: s.revision, title: s.title, archived: s.archived }) } as never);
    };
    const addChunks = (m: ModelMemory, memoId: string, { projectId, revision, chunks }: { projectId: string; revision: number; chunks: number }) => {
      for (let i = 0; i < chunks; i++) {
        m.add({ chunkId: `${memoId}:${revision}:${i}`, memoId, projectId, revision, index: i, content: '' }, vector(memoId.length + revision, i), termFrequencies('word'));
      }
    };
    const index = (memoId: string) => {
      const s = state.get(memoId)!;
      memory.removeMemo(memoId);
      s.indexed = s.deleted ? undefined : { projectId: s.projectId, revision: s.revision, chunks: s.chunks };
      if (s.indexed) addChunks(memory, memoId, s.indexed);
    };
    const filterSets: Filter[][] = [[], [{ field: 'title', operator: 'eq', value: 'red', filter_type: 'native_field' }]];
    const check = () => {
      const freshCatalog = new CatalogMemory();
      const freshMemory = new ModelMemory(dim, 16);
      for (const [memoId] of state) {
        const entry = catalog.entries.get(memoId);
        if (entry) freshCatalog.set(entry);
      }
      for (const [memoId, s] of state) if (s.indexed) addChunks(freshMemory, memoId, s.indexed);
      for (const projectId of ['p', 'q']) {
        for (const filters of filterSets) {
          const all = (c: CatalogMemory, m: ModelMemory) =>
            m.searchDense(Float32Array.from([1, 0, 0, 0]), c.eligible(projectId, filters), 100_000, c, projectId).map((h) => h.chunkId).sort();
          const expected = all(freshCatalog, freshMemory);
          expect(all(catalog, memory)).toEqual(expected);
          expect(memory.count(catalog.eligible(projectId, filters))).toBe(expected.length);
          expect(memory.searchSparse(encodeQuery('word'), projectId, catalog.eligible(projectId, filters), 100_000, catalog).map((h) => h.chunkId).sort()).toEqual(expected);
        }
      }
    };
    let next = 0;
    for (let step = 0; step < 10_000; step++) {
      const r = random();
      const ids = [...state].filter(([, s]) => !s.deleted).map(([id]) => id);
      const memoId = ids.length > 0 && r > 0.1 ? ids[Math.floor(random() * ids.length)]! : `m${next++}`;
      if (!state.has(memoId)) {
        state.set(memoId, { projectId: random() < 0.8 ? 'p' : 'q', revision: 1, title: random() < 0.5 ? 'red' : 'blue', archived: false, deleted: false, chunks: 1 + Math.floor(random() * 4) });
        write(memoId);
        index(memoId);
      } else {
        const s = state.get(memoId)!;
        const op = Math.floor(random() * 6);
        if (op === 0) { s.revision += 1; s.chunks = 1 + Math.floor(random() * 4); write(memoId); index(memoId); } // edited: new chunks
        else if (op === 1) { s.revision += 1; write(memoId); } // edited, its new chunks not indexed yet
        else if (op === 2) { s.archived = !s.archived; write(memoId); }
        else if (op === 3) { s.title = s.title === 'red' ? 'blue' : 'red'; write(memoId); }
        else if (op === 4) { s.projectId = s.projectId === 'p' ? 'q' : 'p'; write(memoId); index(memoId); }
        else { s.deleted = true; write(memoId); index(memoId); }
      }
      if (step % 40 === 0) check();
    }
    check();
    // (the run went through compactions, and past the changes an eligible set records before it is rebuilt)
    expect((memory as unknown as { store: { layout: number } }).store.layout).toBeGreaterThan(0);
    expect(catalogWrites).toBeGreaterThan(4 * 1024);
  });
});
