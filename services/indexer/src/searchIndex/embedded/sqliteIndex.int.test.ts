import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { tempDir } from '@memex/testing';
import { encodeQuery, termFrequencies } from '@memex/text';
import { chunkId } from '@memex/runtime';
import { attrs } from '../../testing/memos';
import { searchIndexContract } from '../contract';
import { EmbeddedSearchIndex } from './sqliteIndex';
import { ModelMemory } from './model';

searchIndexContract('embedded', async () => {
  const dir = tempDir('memex-index-');
  const index = new EmbeddedSearchIndex(join(dir.path, 'index.db'));
  return {
    index,
    dispose: async () => {
      await index.close();
      dir.remove();
    },
  };
});

describe('embedded search index on disk', () => {
  const v = Float32Array.from([1, 0, 0, 0]);

  /** `count` random unit vectors, the same ones for the same seed. */
  function unitVectors(count: number, dimension: number, seed: number): Float32Array[] {
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    return Array.from({ length: count }, () => {
      const x = Float32Array.from({ length: dimension }, random);
      const norm = Math.hypot(...x);
      return x.map((c) => c / norm);
    });
  }

  /** Two processes' indexes on one file (the writer's with `options`), model 'm' open in both, and a memo in the catalog. */
  async function twoProcessesAndAMemo(path: string, options: ConstructorParameters<typeof EmbeddedSearchIndex>[1] = {}) {
    const writer = new EmbeddedSearchIndex(path, options);
    const reader = new EmbeddedSearchIndex(path);
    const p = randomUUID();
    const m = randomUUID();
    await writer.openModel('m', 4);
    await reader.openModel('m', 4);
    await writer.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    return { writer, reader, p, m };
  }

  it("applies a change of a memo's attributes alone without reloading its chunks, and filters see it", async () => {
    const dir = tempDir('memex-index-');
    const index = new EmbeddedSearchIndex(join(dir.path, 'index.db'));
    const p = randomUUID();
    const m = randomUUID();
    await index.openModel('m', 4);
    await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    const chunks = Array.from({ length: 50 }, (_, i) => ({
      chunkId: chunkId(m, 1, i), index: i, content: `words ${i}`, dense: v, terms: termFrequencies(`words ${i}`),
    }));
    await index.putChunks('m', { memoId: m, projectId: p, revision: 1 }, chunks);
    const adds = vi.spyOn(ModelMemory.prototype, 'add');
    try {
      // The summary and tags arrive: same revision, a newer version of the attributes.
      await index.applyCatalog({ memoId: m, projectId: p, version: 2, memo: attrs(p, m, { tags: ['harbour'], summary: 'Cranes.' }) });
      expect(adds).not.toHaveBeenCalled();
      const tagged = { projectId: p, filters: [{ field: 'tags', operator: 'in' as const, value: ['harbour'], filter_type: 'native_field' as const }], limit: 100 };
      expect((await index.searchDense('m', v, tagged)).length).toBe(50);
      // A new revision does reload (its older chunks go).
      await index.applyCatalog({ memoId: m, projectId: p, version: 3, memo: attrs(p, m, { revision: 2 }) });
      expect((await index.searchDense('m', v, { projectId: p, filters: [], limit: 100 })).length).toBe(0);
    } finally {
      adds.mockRestore();
      await index.close();
      dir.remove();
    }
  });

  it('writes a large batch a transaction at a time, answering searches between them, and drops a memo deleted meanwhile', async () => {
    const dir = tempDir('memex-index-');
    // A row per transaction (by default, as many as fit in WRITE_TURN_MS).
    const index = new EmbeddedSearchIndex(join(dir.path, 'index.db'), { writeTurnMs: 0 });
    try {
      const p = randomUUID();
      const memos = Array.from({ length: 5 }, () => randomUUID());
      await index.openModel('m', 4);
      await index.applyCatalogs(memos.map((m) => ({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) })));
      const items = memos.map((m) => ({
        memo: { memoId: m, projectId: p, revision: 1 },
        chunks: Array.from({ length: 30 }, (_, i) => ({ chunkId: chunkId(m, 1, i), index: i, content: `words ${i}`, dense: v, terms: termFrequencies(`words ${i}`) })),
      }));
      const everything = { projectId: p, filters: [], limit: 1000 };
      const writing = index.putChunksOfMemos('m', items);
      // A search that arrives while the batch is written is answered before the batch ends; then the
      // last memo is deleted before its slice is written.
      const between = await new Promise<number>((resolve, reject) => {
        setImmediate(() => {
          index.searchDense('m', v, everything).then((hits) => resolve(hits.length), reject);
          void index.applyCatalog({ memoId: memos[4]!, projectId: p, version: 2, memo: null });
        });
      });
      expect(await writing).toEqual([true, true, true, true, false]);
      expect(between).toBeGreaterThan(0);
      expect(between).toBeLessThan(5 * 30);
      expect((await index.searchDense('m', v, everything)).length).toBe(4 * 30);
      expect(await index.getChunks('m', memos[4]!)).toEqual([]);
    } finally {
      await index.close();
      dir.remove();
    }
  });

  it('writes one large memo a few chunks at a time: searches see it grow, another process loads only the new chunks, a rewrite keeps it whole', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const { writer, reader, p, m } = await twoProcessesAndAMemo(path, { writeTurnMs: 0 }); // a row per transaction
    try {
      const chunks = (n: number, word: string) =>
        Array.from({ length: n }, (_, i) => ({ chunkId: chunkId(m, 1, i), index: i, content: `${word} ${i}`, dense: v, terms: termFrequencies(`${word} ${i}`) }));
      const query = { projectId: p, filters: [], limit: 50 };
      const found = async (index: EmbeddedSearchIndex, word?: string) =>
        (word ? await index.searchSparse('m', encodeQuery(word), query) : await index.searchDense('m', v, query)).length;
      /** What each process finds at every turn of the event loop until `writing` ends. */
      const watch = async (writing: Promise<boolean>) => {
        const seen = { writer: [] as number[], reader: [] as number[] };
        let done = false;
        void writing.finally(() => (done = true));
        while (!done) {
          seen.writer.push(await found(writer));
          seen.reader.push(await found(reader));
          await new Promise((resolve) => setImmediate(resolve));
        }
        return { stored: await writing, seen };
      };
      const readerMemory = reader.modelMemory('m')!.memory;
      const loaded = vi.spyOn(readerMemory, 'add');
      const removed = vi.spyOn(readerMemory, 'removeMemo');

      const first = await watch(writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, chunks(20, 'first')));
      expect(first.stored).toBe(true);
      for (const counts of [first.seen.writer, first.seen.reader]) {
        expect(counts.some((n) => n > 0 && n < 20)).toBe(true);
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
      }
      expect(await found(reader)).toBe(20);
      // Each chunk loaded into the other process once, not the whole memo again after every slice.
      expect(loaded).toHaveBeenCalledTimes(20);
      expect(removed.mock.calls.every((call) => call.length === 3)).toBe(true);

      // Rewritten in place (a new title: same revision, same ids): whole at every turn, in both.
      const second = await watch(writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, chunks(20, 'second')));
      expect(second.stored).toBe(true);
      expect(new Set([...second.seen.writer, ...second.seen.reader])).toEqual(new Set([20]));
      expect(second.seen.writer.length).toBeGreaterThan(2);
      expect([await found(reader, 'second'), await found(reader, 'first')]).toEqual([20, 0]);

      // Fewer chunks than before: those past the new count go too.
      expect(await writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, chunks(12, 'third'))).toBe(true);
      expect([await found(writer), await found(reader), (await writer.getChunks('m', m)).length]).toEqual([12, 12, 12]);

      // Deleted between two slices: the rest is not written, and what was goes with the memo.
      const gone = writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, chunks(20, 'fourth'));
      await new Promise((resolve) => setImmediate(resolve));
      await writer.applyCatalog({ memoId: m, projectId: p, version: 2, memo: null });
      expect(await gone).toBe(false);
      expect([await found(writer), await found(reader), (await writer.getChunks('m', m)).length]).toEqual([0, 0, 0]);
    } finally {
      await reader.close();
      await writer.close();
      dir.remove();
    }
  });

  it("adds chunk ranges to an earlier version's change log and indexes its chunks by range, and still reads its entries as whole-memo changes", async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const old = new Database(path);
    old.exec('CREATE TABLE changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, memo_id TEXT NOT NULL, model TEXT, at INTEGER NOT NULL)');
    old.exec(`CREATE TABLE chunks (model TEXT NOT NULL, chunk_id TEXT NOT NULL, memo_id TEXT NOT NULL, project_id TEXT NOT NULL, revision INTEGER NOT NULL,
      idx INTEGER NOT NULL, content TEXT NOT NULL, dense BLOB NOT NULL, terms BLOB NOT NULL, PRIMARY KEY (model, chunk_id))`);
    old.exec('CREATE INDEX chunks_by_memo ON chunks (memo_id, model)');
    old.close();
    const { writer, reader, p, m } = await twoProcessesAndAMemo(path);
    try {
      await writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [0, 1, 2].map((i) => ({ chunkId: chunkId(m, 1, i), index: i, content: `text ${i}`, dense: v, terms: termFrequencies(`text ${i}`) })));
      const query = { projectId: p, filters: [], limit: 5 };
      expect((await reader.searchDense('m', v, query)).length).toBe(3);
      const removed = vi.spyOn(reader.modelMemory('m')!.memory, 'removeMemo');
      // What a process of the earlier version writes: a row, and a change without a range.
      const earlier = new Database(path);
      expect(earlier.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('changes')").all().map((c) => c.name)).toEqual(
        expect.arrayContaining(['from_idx', 'to_idx']),
      );
      // Chunks indexed by their index within the memo too (a slice is read back by its range).
      expect(earlier.prepare<[], { name: string }>("SELECT name FROM pragma_index_list('chunks') WHERE origin = 'c'").all().map((i) => i.name)).toEqual(['chunks_by_memo_index']);
      earlier.prepare('UPDATE chunks SET content = ? WHERE chunk_id = ?').run('rewritten by an earlier version', chunkId(m, 1, 2));
      earlier.prepare('INSERT INTO changes (memo_id, model, at) VALUES (?, ?, ?)').run(m, 'm', Date.now());
      earlier.close();
      expect((await reader.searchDense('m', v, query)).map((h) => h.content).sort()).toEqual(['rewritten by an earlier version', 'text 0', 'text 1']);
      expect(removed).toHaveBeenCalledWith(m);
    } finally {
      await reader.close();
      await writer.close();
      dir.remove();
    }
  });

  it('serves what it stored after a restart', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const p = randomUUID();
    const m = randomUUID();
    const first = new EmbeddedSearchIndex(path);
    await first.openModel('m', 4);
    await first.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    await first.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [
      { chunkId: chunkId(m, 1, 0), index: 0, content: 'persisted words', dense: v, terms: termFrequencies('persisted words') },
    ]);
    await first.close();
    const second = new EmbeddedSearchIndex(path);
    await second.openModel('m', 4);
    expect((await second.searchDense('m', v, { projectId: p, filters: [], limit: 5 })).map((h) => h.memoId)).toEqual([m]);
    expect((await second.searchSparse('m', encodeQuery('persisted'), { projectId: p, filters: [], limit: 5 })).map((h) => h.memoId)).toEqual([m]);
    await second.close();
    dir.remove();
  });

  it('stores chunk text deflated and terms as varints, and still reads rows written the older ways', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const p = randomUUID();
    const [m, old, old16] = [randomUUID(), randomUUID(), randomUUID()];
    // (a frequency above 127 takes two varint bytes)
    const text = Array.from({ length: 30 }, (_, i) => `Harbour crane ${i} lifts containers onto the quay.`).join(' ') + ' quay'.repeat(200);
    const first = new EmbeddedSearchIndex(path);
    await first.openModel('m', 4);
    await first.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    await first.applyCatalog({ memoId: old, projectId: p, version: 1, memo: attrs(p, old) });
    await first.applyCatalog({ memoId: old16, projectId: p, version: 1, memo: attrs(p, old16) });
    await first.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [{ chunkId: chunkId(m, 1, 0), index: 0, content: text, dense: v, terms: termFrequencies(text) }]);
    await first.close();
    const db = new Database(path);
    const row = db.prepare('SELECT content, terms FROM chunks WHERE memo_id = ?').get(m) as { content: Buffer; terms: Buffer };
    expect(Buffer.isBuffer(row.content)).toBe(true);
    const catalogRow = db.prepare('SELECT memo FROM catalog WHERE memo_id = ?').get(m) as { memo: unknown };
    expect(Buffer.isBuffer(catalogRow.memo)).toBe(true);
    // The attributes without the ids the row has in columns.
    const { projectId: _p, memoId: _m, ...rest } = attrs(p, m);
    expect(JSON.parse(inflateRawSync(catalogRow.memo as Buffer).toString())).toEqual(rest);
    expect(row.content.byteLength).toBeLessThan(text.length / 2);
    const terms = termFrequencies(text);
    // Gaps between 32-bit hashes of a few dozen terms take at most 5 bytes, frequencies here 1.
    expect(row.terms.readUInt32LE(0) & 0x3fff_ffff).toBe(terms.indices.length);
    expect(row.terms.byteLength).toBeLessThanOrEqual(8 + 6 * terms.indices.length);
    expect(row.terms.byteLength).toBeLessThan(8 + 5.5 * terms.indices.length);
    // Rows as the index wrote them before, plain text: u32 frequencies first, then u16 ones flagged
    // in the count's high bit.
    const insertOlder = (memoId: string, text: string, width: 2 | 4) => {
      const t = termFrequencies(text);
      const n = t.indices.length;
      const blob = Buffer.alloc(8 + (4 + width) * n);
      blob.writeUInt32LE(width === 2 ? (n | 0x8000_0000) >>> 0 : n, 0);
      blob.writeUInt32LE(t.length, 4);
      t.indices.forEach((id, i) => {
        blob.writeUInt32LE(id, 8 + 4 * i);
        if (width === 2) blob.writeUInt16LE(t.values[i]!, 8 + 4 * n + 2 * i);
        else blob.writeUInt32LE(t.values[i]!, 8 + 4 * n + 4 * i);
      });
      db.prepare('INSERT INTO chunks (model, chunk_id, memo_id, project_id, revision, idx, content, dense, terms) VALUES (?, ?, ?, ?, 1, 0, ?, ?, ?)').run(
        'm', chunkId(memoId, 1, 0), memoId, p, text, Buffer.from(v.buffer), blob,
      );
    };
    const oldText = 'quay quay quay crane';
    const old16Text = 'crane crane quay harbour';
    insertOlder(old, oldText, 4);
    insertOlder(old16, old16Text, 2);
    // A catalog row as written before: the attributes' JSON as text.
    db.prepare('UPDATE catalog SET memo = ? WHERE memo_id = ?').run(JSON.stringify(attrs(p, old)), old);
    db.close();
    const second = new EmbeddedSearchIndex(path);
    await second.openModel('m', 4);
    const query = { projectId: p, filters: [], limit: 5 };
    const hits = await second.searchSparse('m', encodeQuery('quay crane'), query);
    expect(await second.getChunks('m', m)).toEqual([{ chunkId: chunkId(m, 1, 0), revision: 1, index: 0, content: text }]);
    expect(await second.getChunks('m', old)).toEqual([{ chunkId: chunkId(old, 1, 0), revision: 1, index: 0, content: oldText }]);
    expect((await second.getCatalog(m))?.memo).toEqual(attrs(p, m));
    expect((await second.getCatalog(old))?.memo).toEqual(attrs(p, old));
    await second.close();
    // The same two chunks written the new way score the same: the old row's frequencies were read right.
    const fresh = new EmbeddedSearchIndex(join(dir.path, 'fresh.db'));
    await fresh.openModel('m', 4);
    for (const [memoId, content] of [[m, text], [old, oldText], [old16, old16Text]] as const) {
      await fresh.applyCatalog({ memoId, projectId: p, version: 1, memo: attrs(p, memoId) });
      await fresh.putChunks('m', { memoId, projectId: p, revision: 1 }, [{ chunkId: chunkId(memoId, 1, 0), index: 0, content, dense: v, terms: termFrequencies(content) }]);
    }
    expect(hits.map((h) => [h.memoId, h.content, h.score])).toEqual(
      (await fresh.searchSparse('m', encodeQuery('quay crane'), query)).map((h) => [h.memoId, h.content, h.score]),
    );
    expect(hits).toHaveLength(3);
    await fresh.close();
    dir.remove();
  });

  it('keeps vectors as float16 (float32 with compact: false) and ranks rows of either form alike', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const p = randomUUID();
    const dimension = 64;
    const vectors = unitVectors(40, dimension, 11);
    const memos = vectors.map(() => randomUUID());
    // Even memos by a compact index, odd ones as earlier versions wrote them (float32).
    for (const compact of [true, false]) {
      const index = new EmbeddedSearchIndex(path, { compact });
      await index.openModel('m', dimension);
      for (const [i, memoId] of memos.entries()) {
        if ((i % 2 === 0) !== compact) continue;
        await index.applyCatalog({ memoId, projectId: p, version: 1, memo: attrs(p, memoId) });
        await index.putChunks('m', { memoId, projectId: p, revision: 1 }, [
          { chunkId: chunkId(memoId, 1, 0), index: 0, content: `chunk ${i}`, dense: vectors[i]!, terms: termFrequencies(`chunk ${i}`) },
        ]);
      }
      await index.close();
    }
    const db = new Database(path, { readonly: true });
    const sizes = memos.map((memoId) => (db.prepare('SELECT length(dense) AS n FROM chunks WHERE memo_id = ?').get(memoId) as { n: number }).n);
    db.close();
    expect(sizes).toEqual(memos.map((_, i) => (i % 2 === 0 ? 2 : 4) * dimension));
    // Exact search over both forms: each vector finds itself first, scores within float16's error.
    const index = new EmbeddedSearchIndex(path);
    await index.openModel('m', dimension);
    for (const [i, vector] of vectors.entries()) {
      const [best, next] = await index.searchDense('m', vector, { projectId: p, filters: [], limit: 2 });
      expect(best?.memoId).toBe(memos[i]);
      expect(best!.score).toBeGreaterThan(1 - 2e-3);
      expect(best!.score).toBeGreaterThan(next!.score);
    }
    await index.close();
    dir.remove();
  });

  it('reads rescoring vectors by the rows their chunks were loaded from, and by id where a row is no longer its chunk\'s', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const p = randomUUID();
    const dimension = 64;
    const vectors = unitVectors(30, dimension, 5);
    const memos = vectors.map(() => randomUUID());
    const index = new EmbeddedSearchIndex(path);
    await index.openModel('m', dimension);
    for (const [i, memoId] of memos.entries()) {
      await index.applyCatalog({ memoId, projectId: p, version: 1, memo: attrs(p, memoId) });
      await index.putChunks('m', { memoId, projectId: p, revision: 1 }, [
        { chunkId: chunkId(memoId, 1, 0), index: 0, content: `chunk ${i}`, dense: vectors[i]!, terms: termFrequencies(`chunk ${i}`) },
      ]);
    }
    // Which statements read vectors (no cache here: every search reads its rescored vectors).
    const raw = new Database(path);
    const statement = Object.getPrototypeOf(raw.prepare('SELECT 1')) as { iterate: (...args: unknown[]) => unknown };
    const iterate = vi.spyOn(statement, 'iterate');
    const reads = () => iterate.mock.contexts.map((c) => (c as { source: string }).source).filter((sql) => sql.includes('dense FROM chunks'));
    const selfFirst = async () => {
      for (const [i, vector] of vectors.entries()) {
        const [best, next] = await index.searchDense('m', vector, { projectId: p, filters: [], limit: 2 });
        expect(best?.memoId).toBe(memos[i]);
        expect(best!.score).toBeGreaterThan(1 - 2e-3);
        expect(best!.score).toBeGreaterThan(next!.score);
      }
    };
    try {
      await selfFirst();
      expect(reads().length).toBe(vectors.length);
      expect(reads().every((sql) => sql.includes('rowid IN'))).toBe(true);
      // Every row moved one place without the index's change log (as a VACUUM may renumber them):
      // each chunk's old rowid is now another chunk's row, or none.
      raw.exec('UPDATE chunks SET rowid = -rowid; UPDATE chunks SET rowid = 1 - rowid');
      iterate.mockClear();
      await selfFirst();
      expect(reads().some((sql) => sql.includes('chunk_id IN'))).toBe(true);
    } finally {
      iterate.mockRestore();
      raw.close();
      await index.close();
      dir.remove();
    }
  });

  it('writes rows as earlier versions did with compact: false (for a rolling upgrade), and reads them back the same', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const p = randomUUID();
    const m = randomUUID();
    const text = Array.from({ length: 30 }, (_, i) => `Harbour crane ${i} lifts containers onto the quay.`).join(' ');
    const terms = termFrequencies(text);
    const index = new EmbeddedSearchIndex(path, { compact: false });
    await index.openModel('m', 4);
    await index.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    await index.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [{ chunkId: chunkId(m, 1, 0), index: 0, content: text, dense: v, terms }]);
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT content, terms FROM chunks WHERE memo_id = ?').get(m) as { content: unknown; terms: Buffer };
    const catalogRow = db.prepare('SELECT memo FROM catalog WHERE memo_id = ?').get(m) as { memo: unknown };
    db.close();
    expect(row.content).toBe(text);
    expect(JSON.parse(catalogRow.memo as string)).toEqual(attrs(p, m));
    const n = terms.indices.length;
    expect(row.terms.byteLength).toBe(8 + 8 * n);
    expect(row.terms.readUInt32LE(0)).toBe(n);
    expect(terms.indices.map((_, i) => row.terms.readUInt32LE(8 + 4 * n + 4 * i))).toEqual(terms.values);
    expect(await index.getChunks('m', m)).toEqual([{ chunkId: chunkId(m, 1, 0), revision: 1, index: 0, content: text }]);
    await index.close();
    dir.remove();
  });

  it('orders tied chunks the same way after a restart', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const p = randomUUID();
    const first = new EmbeddedSearchIndex(path);
    await first.openModel('m', 4);
    for (let i = 0; i < 8; i++) {
      const m = randomUUID();
      await first.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
      await first.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [1, 0].map((index) => ({
        chunkId: chunkId(m, 1, index), index, content: 'same words', dense: v, terms: termFrequencies('same words'),
      })));
    }
    const query = { projectId: p, filters: [], limit: 5 };
    const lists = async (index: EmbeddedSearchIndex) => [
      (await index.searchDense('m', v, query)).map((h) => [h.chunkId, h.score]),
      (await index.searchSparse('m', encodeQuery('same words'), query)).map((h) => [h.chunkId, h.score]),
    ];
    const before = await lists(first);
    await first.close();
    const second = new EmbeddedSearchIndex(path);
    await second.openModel('m', 4);
    expect(await lists(second)).toEqual(before);
    await second.close();
    dir.remove();
  });

  it('sees writes another process made to the same file', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const reader = new EmbeddedSearchIndex(path);
    const writer = new EmbeddedSearchIndex(path);
    await reader.openModel('m', 4);
    await writer.openModel('m', 4);
    const p = randomUUID();
    const m = randomUUID();
    await writer.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    await writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [
      { chunkId: chunkId(m, 1, 0), index: 0, content: 'shared', dense: v, terms: termFrequencies('shared') },
    ]);
    expect((await reader.searchDense('m', v, { projectId: p, filters: [], limit: 5 })).map((h) => h.memoId)).toEqual([m]);
    await writer.applyCatalog({ memoId: m, projectId: p, version: 2, memo: null });
    expect(await reader.searchDense('m', v, { projectId: p, filters: [], limit: 5 })).toEqual([]);
    await reader.close();
    await writer.close();
    dir.remove();
  });

  it('reloads a memo\'s vectors only when its chunks change, not on a change of its attributes (here and in another process)', async () => {
    const dir = tempDir('memex-index-');
    const path = join(dir.path, 'index.db');
    const reader = new EmbeddedSearchIndex(path);
    const writer = new EmbeddedSearchIndex(path);
    await reader.openModel('m', 4);
    await writer.openModel('m', 4);
    const p = randomUUID();
    const m = randomUUID();
    const query = { projectId: p, filters: [], limit: 5 };
    await writer.applyCatalog({ memoId: m, projectId: p, version: 1, memo: attrs(p, m) });
    await writer.putChunks('m', { memoId: m, projectId: p, revision: 1 }, [
      { chunkId: chunkId(m, 1, 0), index: 0, content: 'kept', dense: v, terms: termFrequencies('kept') },
    ]);
    expect((await reader.searchDense('m', v, query)).map((h) => h.memoId)).toEqual([m]);
    const reloads = { reader: vi.spyOn(reader.modelMemory('m')!.memory, 'removeMemo'), writer: vi.spyOn(writer.modelMemory('m')!.memory, 'removeMemo') };

    // Summary and tags: attributes only. Both processes show them, and move no vector.
    await writer.applyCatalogs([
      { memoId: m, projectId: p, version: 2, memo: attrs(p, m, { summary: 'Summed up.' }) },
      { memoId: m, projectId: p, version: 3, memo: attrs(p, m, { summary: 'Summed up.', tags: ['t'] }) },
    ]);
    for (const index of [reader, writer]) {
      expect((await index.searchDense('m', v, query)).map((h) => [h.memoId, h.memoSummary])).toEqual([[m, 'Summed up.']]);
      expect((await index.searchDense('m', v, { ...query, filters: [{ field: 'tags', operator: 'in', value: ['t'], filter_type: 'native_field' }] })).length).toBe(1);
    }
    expect(reloads.reader).not.toHaveBeenCalled();
    expect(reloads.writer).not.toHaveBeenCalled();

    // A new revision removes the old chunks: both processes drop them from memory.
    await writer.applyCatalog({ memoId: m, projectId: p, version: 4, memo: attrs(p, m, { revision: 2 }) });
    expect(await reader.searchSparse('m', encodeQuery('kept'), query)).toEqual([]);
    expect(reloads.reader).toHaveBeenCalledWith(m);
    expect(reloads.writer).toHaveBeenCalledWith(m);
    expect(reader.modelMemory('m')!.memory.count(new Map([[m, 1]]))).toBe(0);
    await reader.close();
    await writer.close();
    dir.remove();
  });
});
