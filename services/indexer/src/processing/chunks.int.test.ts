import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '@memex/testing';
import { termFrequencies } from '@memex/text';
import { attrs } from '../testing/memos';
import { EmbeddedSearchIndex } from '../searchIndex/embedded';
import { alreadyIndexed, chunkMemo } from './chunks';

describe('alreadyIndexed: a redelivered revision is not embedded and written again', () => {
  it('is true only when the model holds exactly the chunks of this revision', async () => {
    const dir = tempDir('memex-chunks-');
    const index = new EmbeddedSearchIndex(join(dir.path, 'index.db'));
    try {
      const p = randomUUID();
      const m = randomUUID();
      await index.openModel('m', 2);
      await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
      const text = 'Cranes unload the ships at dawn. '.repeat(200);
      const chunks = chunkMemo(m, 1, text, { targetChars: 250, maxChars: 300 });
      expect(chunks.length).toBeGreaterThan(3);
      expect(await alreadyIndexed(index, 'm', m, chunks)).toBe(false);

      const v = Float32Array.from([1, 0]);
      const put = (list: typeof chunks) =>
        index.putChunks('m', { memoId: m, projectId: p, revision: 1 }, list.map((c) => ({ chunkId: c.chunkId, index: c.index, content: c.content, dense: v, terms: termFrequencies(c.content) })));
      await put(chunks.slice(0, -1));
      expect(await alreadyIndexed(index, 'm', m, chunks), 'one chunk missing').toBe(false);
      await put(chunks);
      expect(await alreadyIndexed(index, 'm', m, chunks)).toBe(true);
      // Another model, or the next revision's chunks: not there.
      expect(await alreadyIndexed(index, 'other', m, chunks)).toBe(false);
      expect(await alreadyIndexed(index, 'm', m, chunkMemo(m, 2, text, { targetChars: 250, maxChars: 300 }))).toBe(false);
    } finally {
      await index.close();
      dir.remove();
    }
  });
});
