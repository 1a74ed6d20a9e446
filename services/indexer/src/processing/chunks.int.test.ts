import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '@memex/testing';
import { chunkText, termFrequencies } from '@memex/text';
import { attrs } from '../testing/memos';
import { EmbeddedSearchIndex } from '../searchIndex/embedded/sqliteIndex';
import { alreadyIndexed, chunkMemo } from './chunks';
import { chunkId } from '@memex/runtime';

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
      const chunks = await chunkMemo(m, 1, text, { targetChars: 250, maxChars: 300 });
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
      expect(await alreadyIndexed(index, 'm', m, await chunkMemo(m, 2, text, { targetChars: 250, maxChars: 300 }))).toBe(false);
    } finally {
      await index.close();
      dir.remove();
    }
  });
});

describe('chunkMemo', () => {
  it("chunks a long document in turns (a callback queued meanwhile runs before it ends), as chunkText does, with the memo's chunk ids", async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `Paragraph ${i} is about the cranes of the harbour. It has a second sentence, and a third one after it.`).join('\n\n');
    let ranBefore = false;
    let finished = false;
    setImmediate(() => (ranBefore = !finished));
    const chunks = await chunkMemo('m', 3, text, { targetChars: 250, maxChars: 300 });
    finished = true;
    expect(ranBefore).toBe(true);
    expect(chunks.map(({ index, content, start, end }) => ({ index, content, start, end }))).toEqual(chunkText(text, { targetChars: 250, maxChars: 300 }));
    expect(chunks.map((c) => c.chunkId)).toEqual(chunks.map((c) => chunkId('m', 3, c.index)));
  });
});
