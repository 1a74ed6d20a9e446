import { describe, expect, it } from 'vitest';
import type { Passage } from '../llm/port';
import { citationsFrom } from './citations';

const passage = (n: number): Passage => ({ n, memoId: `m${n}`, memoTitle: `Memo ${n}`, chunkId: `c${n}`, content: '', distance: 0.1 });

describe('citationsFrom', () => {
  it('collects each cited passage once, in number order, ignoring unknown numbers', () => {
    const text = 'Ships unload [2]. Trucks carry [1][2]. See also [3, 1] and [9] and [x].';
    expect(citationsFrom(text, [passage(1), passage(2), passage(3)])).toEqual([
      { index: 1, memo_uuid: 'm1', memo_title: 'Memo 1', chunk_uuid: 'c1' },
      { index: 2, memo_uuid: 'm2', memo_title: 'Memo 2', chunk_uuid: 'c2' },
      { index: 3, memo_uuid: 'm3', memo_title: 'Memo 3', chunk_uuid: 'c3' },
    ]);
  });

  it('is empty for an answer without markers', () => {
    expect(citationsFrom('Nothing found.', [passage(1)])).toEqual([]);
  });
});
