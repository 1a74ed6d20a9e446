import { describe, it, expect } from 'vitest';
import { fuseScores, minMaxNormalize, reciprocalRankFusion } from './fusion.js';

describe('minMaxNormalize', () => {
  it('maps the minimum to 0 and the maximum to 1', () => {
    expect(minMaxNormalize([2, 4, 3])).toEqual([0, 1, 0.5]);
    expect(minMaxNormalize([-1, 1])).toEqual([0, 1]);
  });

  it('gives 1 to every score when they are all equal, and handles empty input', () => {
    expect(minMaxNormalize([0.7, 0.7])).toEqual([1, 1]);
    expect(minMaxNormalize([5])).toEqual([1]);
    expect(minMaxNormalize([])).toEqual([]);
  });

  it('maps non-finite scores to 0 without disturbing the others', () => {
    expect(minMaxNormalize([Number.NaN, 1, 3, Infinity])).toEqual([0, 0, 1, 0]);
  });

  it('does not modify its input', () => {
    const scores = [3, 1, 2];
    minMaxNormalize(scores);
    expect(scores).toEqual([3, 1, 2]);
  });
});

describe('fuseScores', () => {
  const dense = [
    { id: 'a', score: 0.9 },
    { id: 'b', score: 0.8 },
    { id: 'c', score: 0.5 },
  ];
  const sparse = [
    { id: 'c', score: 12 },
    { id: 'd', score: 7 },
    { id: 'a', score: 2 },
  ];

  it('sums weighted normalised scores, absent items scoring 0', () => {
    const fused = fuseScores([dense, sparse], [0.6, 0.4]);
    const byId = Object.fromEntries(fused.map((x) => [x.id, x.score]));
    expect(byId.a).toBeCloseTo(0.6 * 1 + 0.4 * 0, 12);
    expect(byId.b).toBeCloseTo(0.6 * 0.75, 12);
    expect(byId.c).toBeCloseTo(0.6 * 0 + 0.4 * 1, 12);
    expect(byId.d).toBeCloseTo(0.4 * 0.5, 12);
    expect(fused.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('weights lists equally by default', () => {
    const fused = fuseScores([dense, sparse]);
    expect(fused[0]).toEqual({ id: 'a', score: 1 });
    expect(fused.map((x) => x.id)).toEqual(['a', 'c', 'b', 'd']);
  });

  it('breaks ties by id, numbers numerically', () => {
    expect(fuseScores([[{ id: 'z', score: 1 }, { id: 'm', score: 1 }]]).map((x) => x.id)).toEqual([
      'm',
      'z',
    ]);
    const numeric = fuseScores([[{ id: 10, score: 2 }, { id: 9, score: 2 }, { id: 100, score: 2 }]]);
    expect(numeric.map((x) => x.id)).toEqual([9, 10, 100]);
  });

  it('counts an id repeated within one list once, at its best score', () => {
    const fused = fuseScores([[{ id: 'a', score: 1 }, { id: 'a', score: 3 }, { id: 'b', score: 2 }]]);
    expect(fused).toEqual([
      { id: 'a', score: 1 },
      { id: 'b', score: 0.5 },
    ]);
  });

  it('handles empty input and rejects mismatched weights', () => {
    expect(fuseScores([])).toEqual([]);
    expect(fuseScores([[], []], [1, 1])).toEqual([]);
    expect(() => fuseScores([dense], [1, 2])).toThrow(RangeError);
    expect(() => fuseScores([dense], [Number.NaN])).toThrow(RangeError);
  });

  it('is independent of list order for equal weights', () => {
    expect(fuseScores([sparse, dense])).toEqual(fuseScores([dense, sparse]));
  });
});

describe('reciprocalRankFusion', () => {
  it('sums 1 / (k + rank) with 1-based ranks from array order', () => {
    const fused = reciprocalRankFusion([
      [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
      [{ id: 'c' }, { id: 'a' }],
    ]);
    const byId = Object.fromEntries(fused.map((x) => [x.id, x.score]));
    expect(byId.a).toBeCloseTo(1 / 61 + 1 / 62, 15);
    expect(byId.b).toBeCloseTo(1 / 62, 15);
    expect(byId.c).toBeCloseTo(1 / 63 + 1 / 61, 15);
    expect(fused.map((x) => x.id)).toEqual(['a', 'c', 'b']);
  });

  it('ignores scores and honours k', () => {
    const lists = [[{ id: 'x', score: 0.1 }, { id: 'y', score: 99 }]];
    const fused = reciprocalRankFusion(lists, 1);
    expect(fused).toEqual([
      { id: 'x', score: 1 / 2 },
      { id: 'y', score: 1 / 3 },
    ]);
  });

  it('counts a repeated id at its best rank and breaks ties by id', () => {
    const fused = reciprocalRankFusion([
      [{ id: 'b' }, { id: 'b' }],
      [{ id: 'a' }],
    ]);
    expect(fused.map((x) => x.id)).toEqual(['a', 'b']);
    expect(fused[1]?.score).toBeCloseTo(1 / 61, 15);
  });

  it('rejects a negative k', () => {
    expect(() => reciprocalRankFusion([], -1)).toThrow(RangeError);
  });
});
