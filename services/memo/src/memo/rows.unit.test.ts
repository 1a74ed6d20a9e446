import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tagId } from '@memex/runtime';
import { rowData } from './rows';

describe('event data in rows', () => {
  const [memoId, projectId] = [randomUUID(), randomUUID()];
  const ids = { memoId, projectId };

  it('leaves out the clear ids and derivable tag ids, and gives the data back whole', () => {
    const data = { memoId, projectId, revision: 2, summary: 'S', tags: ['a', 'b c'].map((tag) => ({ uuid: tagId(memoId, tag), tag })), at: 'now' };
    const lean = rowData.lean('MemoSummarized', data);
    expect(lean).toEqual({ revision: 2, summary: 'S', tags: ['a', 'b c'], at: 'now' });
    expect(rowData.whole('MemoSummarized', lean, ids)).toEqual(data);
    const chunked = { memoId, projectId, revision: 1, chunks: { count: 0, offsets: '' } };
    expect(rowData.whole('MemoChunked', rowData.lean('MemoChunked', chunked), ids)).toEqual(chunked);
  });

  it('keeps tag ids it could not derive, and reads data written whole as it is', () => {
    const odd = { memoId, projectId, revision: 1, tags: [{ uuid: randomUUID(), tag: 'x' }], at: 'now' };
    const lean = rowData.lean('MemoTagged', odd);
    expect(lean.tags).toEqual(odd.tags);
    expect(rowData.whole('MemoTagged', lean, ids)).toEqual(odd);
    // A row a version before wrote: the box held the data whole.
    expect(rowData.whole('MemoTagged', odd, ids)).toBe(odd);
  });
});
