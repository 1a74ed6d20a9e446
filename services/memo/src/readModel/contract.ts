/**
 * The memo read model contract: every adapter runs this suite (SQLite always; MongoDB when reachable).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_CHUNKS, matchesFilters, type MemoView as Memo } from '@memex/contracts';
import { filterCases, generateFilterMemos } from '@memex/testing';
import { filterable, foldTitle, type MemoReadModel, type MemoRecord } from './port';

interface ReadModelFixture {
  readModel: MemoReadModel;
  dispose(): Promise<void>;
}

export function memoDoc(over: Partial<Memo> = {}): Memo {
  const now = new Date().toISOString();
  return {
    uuid: randomUUID(),
    created_at: now,
    updated_at: now,
    title: 'A memo',
    content_ref: { blob: { name: 'content/p/m/1', bytes: 40, sha256: '0'.repeat(64) }, length: 12, digest: '1'.repeat(64) },
    summary: '',
    content_length: 12,
    metadata: {},
    client_reference_id: null,
    source: null,
    type: 'text',
    expiration_date: null,
    archived: false,
    pending: true,
    tags: [],
    chunk_revision: 1,
    chunk_layout: EMPTY_CHUNKS,
    first_chunk: '',
    processing_error: null,
    ...over,
  };
}

export function readModelContract(name: string, setup: () => Promise<ReadModelFixture>): void {
  describe(`memo read model contract: ${name}`, () => {
    let fixture: ReadModelFixture;
    let rm: MemoReadModel;
    beforeAll(async () => {
      fixture = await setup();
      rm = fixture.readModel;
    });
    afterAll(async () => {
      await fixture?.dispose();
    });

    const project = () => randomUUID();
    const record = (projectId: string, version: number, over: Partial<Memo> = {}): MemoRecord => ({
      projectId,
      version,
      memo: memoDoc(over),
    });

    it('finds nothing for an unknown memo or reference', async () => {
      expect(await rm.get(randomUUID())).toBeUndefined();
      expect(await rm.findByReference(project(), 'nope')).toBeUndefined();
    });

    it('stores a memo and finds it by id and by reference within its project only', async () => {
      const p = project();
      const r = record(p, 1, { client_reference_id: 'ext-1', metadata: { a: [1, { b: 'ü' }] } });
      await rm.upsert(r);
      expect(await rm.get(r.memo.uuid)).toEqual(r);
      expect(await rm.findByReference(p, 'ext-1')).toEqual(r);
      expect(await rm.findByReference(project(), 'ext-1')).toBeUndefined();
      expect(await rm.findByReference(p, 'EXT-1')).toBeUndefined();
    });

    it('ignores a write older than or equal to what it has', async () => {
      const p = project();
      const v2 = record(p, 2, { title: 'two' });
      await rm.upsert(v2);
      await rm.upsert({ ...v2, version: 1, memo: { ...v2.memo, title: 'one' } });
      await rm.upsert({ ...v2, version: 2, memo: { ...v2.memo, title: 'two again' } });
      expect((await rm.get(v2.memo.uuid))?.memo.title).toBe('two');
      await rm.upsert({ ...v2, version: 3, memo: { ...v2.memo, title: 'three' } });
      expect((await rm.get(v2.memo.uuid))?.memo.title).toBe('three');
    });

    it('removes a memo for good: a late older write does not bring it back', async () => {
      const p = project();
      const r = record(p, 3, { client_reference_id: 'gone' });
      await rm.upsert(r);
      await rm.remove(p, r.memo.uuid, 4);
      expect(await rm.get(r.memo.uuid)).toBeUndefined();
      expect(await rm.findByReference(p, 'gone')).toBeUndefined();
      await rm.upsert({ ...r, version: 3 });
      await rm.upsert({ ...r, version: 4 });
      expect(await rm.get(r.memo.uuid)).toBeUndefined();
    });

    it('searches titles case-insensitively by substring and prefix, ordered by title, within the project', async () => {
      const p = project();
      const titles = ['Beta report', 'alpha Report', 'ÄRGER im Büro', 'Gamma', 'report card', 'Alphabet'];
      for (const title of titles) await rm.upsert(record(p, 1, { title }));
      await rm.upsert(record(project(), 1, { title: 'Report elsewhere' }));
      await rm.upsert(record(p, 1, { title: 'Archived report', archived: true }));

      const contains = await rm.searchTitles(p, { mode: 'contains', query: 'REPORT', filters: [], limit: 10 });
      expect(contains.map((r) => r.memo.title)).toEqual(['alpha Report', 'Beta report', 'report card']);
      const prefix = await rm.searchTitles(p, { mode: 'startswith', query: 'ALPHA', filters: [], limit: 10 });
      expect(prefix.map((r) => r.memo.title)).toEqual(['alpha Report', 'Alphabet']);
      const umlaut = await rm.searchTitles(p, { mode: 'startswith', query: 'ärger', filters: [], limit: 10 });
      expect(umlaut.map((r) => r.memo.title)).toEqual(['ÄRGER im Büro']);
      const limited = await rm.searchTitles(p, { mode: 'contains', query: 'a', filters: [], limit: 2 });
      expect(limited).toHaveLength(2);
    });

    it('applies every filter exactly as the reference semantics say', async () => {
      const p = project();
      const memos = generateFilterMemos(80, 7);
      const byId = new Map<string, (typeof memos)[number]>();
      for (const m of memos) {
        const doc = memoDoc({
          title: m.title,
          source: m.source,
          client_reference_id: m.clientReferenceId,
          tags: m.tags.map((tag) => ({ uuid: randomUUID(), tag })),
          metadata: m.metadata,
        });
        byId.set(doc.uuid, m);
        await rm.upsert({ projectId: p, version: 1, memo: doc });
      }
      // Every generated title has a space, so this title search alone selects them all.
      for (const { name, filters } of filterCases(memos)) {
        const got = await rm.searchTitles(p, { mode: 'contains', query: ' ', filters, limit: 1_000 });
        const expected = [...byId.entries()]
          .filter(([, m]) => matchesFilters(m, filters))
          .map(([id, m]) => ({ id, folded: foldTitle(m.title) }))
          .sort((a, b) => (a.folded < b.folded ? -1 : a.folded > b.folded ? 1 : a.id < b.id ? -1 : 1))
          .map((e) => e.id);
        expect(got.map((r) => r.memo.uuid), name).toEqual(expected);
        for (const r of got) expect(matchesFilters(filterable(r.memo), filters), name).toBe(true);
      }
    });

    it('lists a project newest first, pages through every memo exactly once, and filters before paging', async () => {
      const p = project();
      const other = project();
      const base = Date.parse('2026-01-01T00:00:00.000Z');
      const made: MemoRecord[] = [];
      for (let i = 0; i < 23; i++) {
        const at = new Date(base + Math.floor(i / 2) * 1_000).toISOString(); // pairs share a created_at: ids break the tie
        made.push(record(p, 1, { created_at: at, title: `Memo ${i}`, source: i % 3 === 0 ? 'wiki' : 'mail', archived: i === 5 }));
      }
      for (const r of made) await rm.upsert(r);
      await rm.upsert(record(other, 1, { title: 'Not mine' }));
      const expected = [...made]
        .sort((a, b) => (a.memo.created_at !== b.memo.created_at ? (a.memo.created_at < b.memo.created_at ? 1 : -1) : a.memo.uuid < b.memo.uuid ? 1 : -1))
        .map((r) => r.memo.uuid);
      const seen: string[] = [];
      for (let offset = 0; offset < 30; offset += 5) {
        const { records, count } = await rm.listMemos(p, { filters: [], offset, limit: 5 });
        expect(count).toBe(23);
        seen.push(...records.map((r) => r.memo.uuid));
      }
      expect(seen).toEqual(expected);

      const wiki = [{ field: 'source', operator: 'eq', value: 'wiki', filter_type: 'native_field' }] as const;
      const first = await rm.listMemos(p, { filters: [...wiki], offset: 0, limit: 3 });
      const rest = await rm.listMemos(p, { filters: [...wiki], offset: 3, limit: 100 });
      expect(first.count).toBe(8);
      expect(rest.count).toBe(8);
      expect([...first.records, ...rest.records].map((r) => r.memo.uuid)).toEqual(
        expected.filter((id) => made.find((r) => r.memo.uuid === id)!.memo.source === 'wiki'),
      );
      expect((await rm.listMemos(project(), { filters: [], offset: 0, limit: 10 })).count).toBe(0);
    });

    it('lists memos due for archiving and the next expiration', async () => {
      const p = project();
      const past = record(p, 1, { expiration_date: '2001-01-01T00:00:00.000Z' });
      const future = record(p, 1, { expiration_date: '2999-01-01T00:00:00.000Z' });
      const done = record(p, 1, { expiration_date: '2000-06-01T00:00:00.000Z', archived: true });
      for (const r of [past, future, done]) await rm.upsert(r);
      const due = await rm.dueForArchive('2020-01-01T00:00:00.000Z', 1_000);
      expect(due).toContainEqual({ projectId: p, memoId: past.memo.uuid });
      expect(due.map((d) => d.memoId)).not.toContain(future.memo.uuid);
      expect(due.map((d) => d.memoId)).not.toContain(done.memo.uuid);
      const next = await rm.nextExpiration();
      expect(next !== undefined && next <= '2001-01-01T00:00:00.000Z').toBe(true);
      await rm.upsert({ ...past, version: 2, memo: { ...past.memo, archived: true } });
    });
  });
}
