import { describe, expect, it } from 'vitest';
import type { ChunkCandidate } from '../searchIndex/port';
import { seededRandom } from '@memex/testing';
import { fuseRankings } from './fusion';

const c = (chunkId: string, score: number): ChunkCandidate => ({
  chunkId,
  memoId: `m-${chunkId}`,
  chunkIndex: 0,
  content: chunkId,
  memoTitle: '',
  memoSummary: '',
  score,
});

describe('fuseRankings', () => {
  it('weighs BM25 relative to the best lexical match and cosine as it is', () => {
    const hits = fuseRankings([c('a', 8), c('b', 4)], [c('b', 0.9), c('c', 0.6), c('a', 0.2)], 0.85, 10);
    expect(hits.map((h) => h.chunkId)).toEqual(['a', 'b', 'c']);
    expect(hits[0]!.distance).toBeCloseTo(1 - (0.85 * 1 + 0.15 * 0.2), 10);
    expect(hits[1]!.distance).toBeCloseTo(1 - (0.85 * 0.5 + 0.15 * 0.9), 10);
    expect(hits[2]!.distance).toBeCloseTo(1 - 0.15 * 0.6, 10);
    // The parts shown as the score breakdown add up to the relevance.
    for (const hit of hits) expect(hit.lexical + hit.dense).toBeCloseTo(1 - hit.distance, 10);
    expect(hits[2]!).toMatchObject({ lexical: 0, dense: expect.closeTo(0.15 * 0.6, 10) });
  });

  it('keeps distances in [0, 1], ignores negative cosines, breaks ties by id, and cuts at the limit', () => {
    const hits = fuseRankings([], [c('z', -0.5), c('y', 0.5), c('x', 0.5)], 0.85, 2);
    expect(hits.map((h) => h.chunkId)).toEqual(['x', 'y']);
    expect(fuseRankings([c('only', 3)], [], 0.85, 5)).toEqual([{ ...c('only', 3), distance: expect.closeTo(0.15, 10), lexical: 0.85, dense: 0 }]);
    expect(fuseRankings([c('d', 1)], [c('d', 1)], 0.85, 5)[0]!.distance).toBe(0);
    expect(fuseRankings([], [], 0.85, 5)).toEqual([]);
  });
});

describe('fuseRankings ties', () => {
  it('orders equal distances by memo uuid, then chunk index, whatever order the rankings came in', () => {
    const at = (memoId: string, chunkIndex: number): ChunkCandidate => ({ ...c(`${memoId}:${chunkIndex}`, 0.5), memoId, chunkIndex });
    const tied = [at('b', 0), at('a', 2), at('a', 10), at('c', 1), at('a', 1)];
    const expected = ['a:1', 'a:2', 'a:10', 'b:0', 'c:1'];
    expect(fuseRankings([], tied, 0.85, 10).map((h) => h.chunkId)).toEqual(expected);
    expect(fuseRankings([], [...tied].reverse(), 0.85, 10).map((h) => h.chunkId)).toEqual(expected);
    expect(fuseRankings([], [...tied].reverse(), 0.85, 2).map((h) => h.chunkId)).toEqual(expected.slice(0, 2));
  });
});

describe('fuseRankings against a full sort', () => {
  /** The reference: every candidate fused, all of them sorted, then cut. */
  const reference = (lexical: ChunkCandidate[], dense: ChunkCandidate[], w: number, limit: number) => {
    const maxLexical = Math.max(0, ...lexical.map((x) => x.score));
    const byId = new Map<string, { c: ChunkCandidate; lexical: number; dense: number }>();
    for (const x of lexical) if (!byId.has(x.chunkId)) byId.set(x.chunkId, { c: x, lexical: w * (maxLexical > 0 ? x.score / maxLexical : 0), dense: 0 });
    for (const x of dense) {
      const part = (1 - w) * Math.max(0, Math.min(1, x.score));
      const found = byId.get(x.chunkId);
      if (found) found.dense = part;
      else byId.set(x.chunkId, { c: x, lexical: 0, dense: part });
    }
    return [...byId.values()]
      .map((f) => ({ id: f.c.chunkId, memoId: f.c.memoId, chunkIndex: f.c.chunkIndex, distance: Math.min(1, Math.max(0, 1 - (f.lexical + f.dense))) }))
      .sort((a, b) => a.distance - b.distance || (a.memoId < b.memoId ? -1 : a.memoId > b.memoId ? 1 : a.chunkIndex - b.chunkIndex))
      .slice(0, limit);
  };

  it('keeps the same hits in the same order, ties and clamped distances included', () => {
    const random = seededRandom(13);
    for (let round = 0; round < 200; round++) {
      // Coarse scores, so that equal distances (and distances clamped at 1) are common; memo and
      // chunk index unique per chunk, as on every index, and shuffled against the chunk ids.
      const memos = Array.from({ length: 8 }, (_, m) => `m${(m * 5) % 8}`);
      const pool = Array.from({ length: 60 }, (_, i) => ({ chunkId: `k${i}`, memoId: memos[i % 8]!, chunkIndex: Math.floor(i / 8) }));
      const pick = (n: number, score: () => number) =>
        pool
          .filter(() => random() < n / pool.length)
          .map((p): ChunkCandidate => ({ ...p, content: p.chunkId, memoTitle: '', memoSummary: '', score: score() }));
      const lexical = pick(30, () => Math.round(random() * 4));
      const dense = pick(30, () => Math.round(random() * 6) / 4 - 0.5);
      const limit = 1 + Math.floor(random() * 20);
      const got = fuseRankings(lexical, dense, 0.85, limit);
      const want = reference(lexical, dense, 0.85, limit);
      expect(got.map((h) => h.chunkId)).toEqual(want.map((h) => h.id));
      expect(got.map((h) => h.distance)).toEqual(want.map((h) => h.distance));
      // With the index's numeric keys (one per chunk, unrelated to the ids' order): the same hits.
      const key = (x: ChunkCandidate): ChunkCandidate => ({ ...x, key: (Number(x.chunkId.slice(1)) * 37) % 61 });
      const keyed = fuseRankings(lexical.map(key), dense.map(key), 0.85, limit);
      expect(keyed.map((h) => [h.chunkId, h.distance, h.lexical, h.dense])).toEqual(got.map((h) => [h.chunkId, h.distance, h.lexical, h.dense]));
      // Keys on one side only: matched by id, each chunk once.
      const half = fuseRankings(lexical.map(key), dense, 0.85, limit);
      expect(half.map((h) => [h.chunkId, h.distance])).toEqual(got.map((h) => [h.chunkId, h.distance]));
    }
  });
});
