import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Filter } from '@memex/contracts';
import { tagId } from '@memex/runtime';
import { tempDir } from '@memex/testing';
import { memoDoc, readModelContract } from './contract';
import { SqliteMemoReadModel } from './sqlite';

readModelContract('SQLite', async () => {
  const dir = tempDir('memex-rm-');
  const readModel = new SqliteMemoReadModel(join(dir.path, 'memo.db'));
  return {
    readModel,
    dispose: async () => {
      await readModel.close();
      dir.remove();
    },
  };
});

describe('SQLite read model rows at rest', () => {
  const projectId = randomUUID();
  const at = (minute: number) => `2026-11-25T10:${String(minute).padStart(2, '0')}:00.000Z`;

  it('keeps documents deflated with their creation time in a column, and lists old and new rows in one order', async () => {
    const dir = tempDir('memex-rm-');
    const path = join(dir.path, 'memo.db');
    try {
      // A file an older version made: its table without created_at, its index on the JSON, a row.
      const old = new Database(path);
      old.exec(`CREATE TABLE memos (memo_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, version INTEGER NOT NULL, reference_id TEXT,
        title_folded TEXT NOT NULL, archived INTEGER NOT NULL, expiration_date TEXT, doc TEXT NOT NULL);
        CREATE INDEX memos_created ON memos (project_id, json_extract(doc, '$.created_at') DESC, memo_id DESC);`);
      const oldDoc = memoDoc({ title: 'Written before', created_at: at(2) });
      old.prepare('INSERT INTO memos VALUES (?, ?, 1, NULL, ?, 0, NULL, ?)').run(oldDoc.uuid, projectId, 'written before', JSON.stringify(oldDoc));
      old.close();

      const readModel = new SqliteMemoReadModel(path);
      const [first, third] = [memoDoc({ title: 'First', created_at: at(1) }), memoDoc({ title: 'Third', created_at: at(3), summary: 'word '.repeat(100) })];
      for (const memo of [first, third]) await readModel.upsert({ projectId, version: 1, memo });
      const { records } = await readModel.listMemos(projectId, { filters: [], offset: 0, limit: 10 });
      expect(records.map((r) => r.memo.title)).toEqual(['Third', 'Written before', 'First']);
      expect((await readModel.get(oldDoc.uuid))?.memo).toEqual(oldDoc);
      expect((await readModel.get(third.uuid))?.memo).toEqual(third);
      await readModel.close();

      const db = new Database(path, { readonly: true });
      const row = db.prepare('SELECT doc, created_at FROM memos WHERE memo_id = ?').get(third.uuid) as { doc: unknown; created_at: string };
      expect(Buffer.isBuffer(row.doc)).toBe(true);
      expect((row.doc as Buffer).byteLength).toBeLessThan(JSON.stringify(third).length / 2);
      expect(row.created_at).toBe(third.created_at);
      const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memos'").all() as { name: string }[]).map((i) => i.name);
      expect(indexes).toContain('memos_by_created');
      expect(indexes).not.toContain('memos_created');
      const plan = JSON.stringify(
        db.prepare(`EXPLAIN QUERY PLAN SELECT doc FROM memos WHERE project_id = ? ORDER BY COALESCE(created_at, json_extract(doc, '$.created_at')) DESC, memo_id DESC LIMIT 10`).all(projectId),
      );
      expect(plan).toContain('memos_by_created');
      expect(plan).not.toContain('TEMP B-TREE');
      db.close();
    } finally {
      dir.remove();
    }
  });

  it('writes documents as JSON text with compact: false (for a rolling upgrade)', async () => {
    const dir = tempDir('memex-rm-');
    const path = join(dir.path, 'memo.db');
    try {
      const readModel = new SqliteMemoReadModel(path, { compact: false });
      const memo = memoDoc({ created_at: at(5) });
      await readModel.upsert({ projectId, version: 1, memo });
      await readModel.close();
      const db = new Database(path, { readonly: true });
      const row = db.prepare('SELECT doc FROM memos WHERE memo_id = ?').get(memo.uuid) as { doc: unknown };
      db.close();
      expect(JSON.parse(row.doc as string)).toEqual(memo);
    } finally {
      dir.remove();
    }
  });
  it('keeps tags by name when their ids are the derived ones, and gives every read its tags whole', async () => {
    const dir = tempDir('memex-rm-');
    const path = join(dir.path, 'memo.db');
    try {
      const readModel = new SqliteMemoReadModel(path);
      const derivedId = randomUUID();
      const derived = memoDoc({ uuid: derivedId, title: 'Derived tags', tags: ['solar', 'wind'].map((tag) => ({ uuid: tagId(derivedId, tag), tag })) });
      // One id that is not derived (an id a client or an older version gave): the document keeps every id.
      const foreign = memoDoc({ title: 'Derived and foreign tags', tags: [{ uuid: randomUUID(), tag: 'solar' }] });
      for (const memo of [derived, foreign]) await readModel.upsert({ projectId, version: 1, memo });

      const db = new Database(path, { readonly: true });
      const stored = (id: string) => JSON.parse(inflateRawSync((db.prepare('SELECT doc FROM memos WHERE memo_id = ?').get(id) as { doc: Buffer }).doc).toString()) as { tags: unknown };
      expect(stored(derived.uuid).tags).toEqual(['solar', 'wind']);
      expect(stored(foreign.uuid).tags).toEqual(foreign.tags);
      db.close();

      const byTag: Filter[] = [{ field: 'tags', operator: 'in', value: ['wind'], filter_type: 'native_field' }];
      expect((await readModel.get(derived.uuid))?.memo).toEqual(derived);
      expect((await readModel.get(foreign.uuid))?.memo).toEqual(foreign);
      expect((await readModel.listMemos(projectId, { filters: [], offset: 0, limit: 10 })).records.map((r) => r.memo)).toEqual(expect.arrayContaining([derived, foreign]));
      expect((await readModel.listMemos(projectId, { filters: byTag, offset: 0, limit: 10 })).records.map((r) => r.memo)).toEqual([derived]);
      expect((await readModel.searchTitles(projectId, { mode: 'contains', query: 'derived', filters: byTag, limit: 10 })).map((r) => r.memo)).toEqual([derived]);
      expect((await readModel.searchTitles(projectId, { mode: 'startswith', query: 'derived', filters: [], limit: 10 })).map((r) => r.memo.tags)).toEqual([foreign.tags, derived.tags]);
      await readModel.close();
    } finally {
      dir.remove();
    }
  });
});
