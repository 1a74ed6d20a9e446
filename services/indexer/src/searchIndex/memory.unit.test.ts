import { describe, expect, it } from 'vitest';
import { encodeQuery, termFrequencies } from '@memex/text';
import { attrs } from './contract';
import { CatalogMemory, ModelMemory } from './memory';

describe('ModelMemory', () => {
  it('keeps finding the right chunks after many removals compact it', () => {
    const catalog = new CatalogMemory();
    const memory = new ModelMemory(2, 16);
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

    const eligible = catalog.eligible('p', []);
    expect(memory.count(eligible)).toBe(600);
    const dense = memory.searchDense(Float32Array.from([1, 0]), eligible, 3, catalog);
    expect(dense.map((h) => h.memoId)).toEqual(['memo-0', 'memo-10', 'memo-20']);
    const sparse = memory.searchSparse(encodeQuery('alpha'), 'p', eligible, 1_000, catalog);
    expect(sparse).toHaveLength(600);
    expect(sparse.every((h) => Number(h.memoId.slice(5)) % 10 === 0)).toBe(true);
    expect(memory.searchSparse(encodeQuery('beta'), 'p', eligible, 10, catalog)).toEqual([]);
    // It keeps working after compaction: new chunks and removals.
    memory.removeMemo('memo-0');
    expect(memory.searchDense(Float32Array.from([1, 0]), catalog.eligible('p', []), 1, catalog)[0]!.memoId).toBe('memo-10');
  });
});
