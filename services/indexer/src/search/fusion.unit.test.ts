import { describe, expect, it } from 'vitest';
import type { ChunkCandidate } from '../searchIndex/port';
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
  });

  it('keeps distances in [0, 1], ignores negative cosines, breaks ties by id, and cuts at the limit', () => {
    const hits = fuseRankings([], [c('z', -0.5), c('y', 0.5), c('x', 0.5)], 0.85, 2);
    expect(hits.map((h) => h.chunkId)).toEqual(['x', 'y']);
    expect(fuseRankings([c('only', 3)], [], 0.85, 5)).toEqual([{ ...c('only', 3), distance: expect.closeTo(0.15, 10) }]);
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
