import { describe, expect, it } from 'vitest';
import { seededRandom } from '@memex/testing';
import { TopK } from './topK';

describe('TopK', () => {
  it('keeps the k best of many, best first', () => {
    const random = seededRandom(3);
    const values = Array.from({ length: 1000 }, () => random());
    const top = new TopK<number>(10);
    values.forEach((v, i) => top.offer(v, i));
    const expected = values.map((v, i) => ({ score: v, item: i })).sort((a, b) => b.score - a.score).slice(0, 10);
    expect(top.sorted()).toEqual(expected);
    expect(top.threshold).toBe(expected[9]!.score);
  });

  it('gives the kept entries unordered, score and item paired, the same set sorted() ranks', () => {
    const random = seededRandom(5);
    const top = new TopK<number>(16, (a, b) => a - b);
    // (scores rounded to tenths: many ties, decided by the item)
    for (let i = 0; i < 500; i++) top.offer(Math.round(random() * 10) / 10, i);
    const { scores, items } = top.unordered();
    const pairs = items.map((item, i) => ({ score: scores[i]!, item }));
    const byRank = (a: { score: number; item: number }, b: { score: number; item: number }) => b.score - a.score || a.item - b.item;
    expect(pairs.length).toBe(16);
    expect([...pairs].sort(byRank)).toEqual(top.sorted());
  });

  it('holds fewer than k when given fewer, and nothing for k = 0', () => {
    const top = new TopK<string>(5);
    top.offer(1, 'a');
    top.offer(3, 'b');
    expect(top.sorted().map((x) => x.item)).toEqual(['b', 'a']);
    expect(top.threshold).toBe(Number.NEGATIVE_INFINITY);
    const none = new TopK<string>(0);
    none.offer(1, 'a');
    expect(none.sorted()).toEqual([]);
  });
});

describe('TopK ties', () => {
  it('keeps and orders equal scores by the tie-break, whatever the offer order', () => {
    const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    for (const order of [['d', 'b', 'a', 'c', 'e'], ['e', 'c', 'a', 'b', 'd']]) {
      const top = new TopK<string>(3, byName);
      for (const item of order) top.offer(1, item);
      top.offer(0.5, 'aa');
      expect(top.sorted().map((x) => x.item)).toEqual(['a', 'b', 'c']);
    }
  });

  it('sorts like a plain sort by score then tie-break, with long runs of ties, and stays usable after sorting', () => {
    const random = seededRandom(5);
    const byItem = (a: number, b: number) => a - b;
    const offered = Array.from({ length: 3_000 }, (_, i) => ({ score: Math.floor(random() * 40), item: (i * 7919) % 3_000 }));
    for (const k of [1, 16, 17, 232, 3_000]) {
      const top = new TopK<number>(k, byItem);
      for (const { score, item } of offered) top.offer(score, item);
      const expected = [...offered].sort((a, b) => b.score - a.score || a.item - b.item).slice(0, k);
      expect(top.sorted()).toEqual(expected);
      expect(top.sorted()).toEqual(expected);
      top.offer(100, -1);
      expect(top.sorted()[0]).toEqual({ score: 100, item: -1 });
    }
  });
});
