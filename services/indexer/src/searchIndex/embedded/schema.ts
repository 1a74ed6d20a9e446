/**
 * The embedded index's SQLite file: its schema (created or upgraded at open), the change log other
 * processes sharing the file follow, and the statements the index runs.
 */
import { randomUUID } from 'node:crypto';
import type { SqliteDatabase } from '@memex/runtime';
import type { CatalogRow, ChunkRow } from './rows';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS catalog (
  memo_id    TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  version    INTEGER NOT NULL,
  memo       TEXT -- the attributes' JSON, or its raw deflate as a BLOB (see compressText); NULL: deleted
);
-- key 'instance': this file's identity, which saved graphs name.
CREATE TABLE IF NOT EXISTS info (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS models (
  model     TEXT PRIMARY KEY,
  dimension INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
  model      TEXT NOT NULL,
  chunk_id   TEXT NOT NULL,
  memo_id    TEXT NOT NULL,
  project_id TEXT NOT NULL,
  revision   INTEGER NOT NULL,
  idx        INTEGER NOT NULL,
  content    TEXT NOT NULL, -- the text, or its raw deflate as a BLOB (see compressText)
  dense      BLOB NOT NULL,
  terms      BLOB NOT NULL,
  PRIMARY KEY (model, chunk_id)
);
-- (by index too: a slice of a large memo's chunks is read back by its range of indices; files
-- from before had chunks_by_memo on (memo_id, model), which this one replaces)
CREATE INDEX IF NOT EXISTS chunks_by_memo_index ON chunks (memo_id, model, idx);
DROP INDEX IF EXISTS chunks_by_memo;
-- Every change names the memo it touched (or, with memo_id '', a model), so other processes
-- sharing the file reload just that: a memo's catalog row (model NULL), its chunks under one model,
-- or its chunks under every model ('*', after a deletion or a new revision removed some).
-- from_idx/to_idx: only the chunks with from_idx <= idx < to_idx changed (a slice of a large memo
-- written in several transactions); NULL: all of them (and all of them to a version before these columns).
CREATE TABLE IF NOT EXISTS changes (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  memo_id  TEXT NOT NULL,
  model    TEXT,
  at       INTEGER NOT NULL,
  from_idx INTEGER,
  to_idx   INTEGER
);
`;

/** The changes table of a file written by a version before chunk ranges gets them (see SCHEMA). */
const CHANGE_RANGE_COLUMNS = ['from_idx', 'to_idx'];

/** Creates or upgrades the schema; returns the file's identity, which saved graphs name. */
export function prepareIndexFile(db: SqliteDatabase): string {
  db.exec(SCHEMA);
  const columns = new Set(db.prepare<[], { name: string }>('SELECT name FROM pragma_table_info(\'changes\')').all().map((c) => c.name));
  for (const column of CHANGE_RANGE_COLUMNS) if (!columns.has(column)) db.exec(`ALTER TABLE changes ADD COLUMN ${column} INTEGER`);
  db.prepare(`INSERT OR IGNORE INTO info (key, value) VALUES ('instance', ?)`).run(randomUUID());
  return db.prepare<[], { value: string }>(`SELECT value FROM info WHERE key = 'instance'`).get()!.value;
}

/** The statements the index runs on its file. */
export type Statements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: SqliteDatabase) {
  return {
    catalogRow: db.prepare<[string], CatalogRow>('SELECT * FROM catalog WHERE memo_id = ?'),
    allCatalog: db.prepare<[], CatalogRow>('SELECT * FROM catalog'),
    upsertCatalog: db.prepare<[string, string, number, string | Buffer | null]>(
      `INSERT INTO catalog (memo_id, project_id, version, memo) VALUES (?, ?, ?, ?)
       ON CONFLICT (memo_id) DO UPDATE SET project_id = excluded.project_id, version = excluded.version, memo = excluded.memo`,
    ),
    model: db.prepare<[string], { dimension: number }>('SELECT dimension FROM models WHERE model = ?'),
    insertModel: db.prepare<[string, number]>('INSERT OR IGNORE INTO models (model, dimension) VALUES (?, ?)'),
    deleteModel: db.prepare<[string]>('DELETE FROM models WHERE model = ?'),
    // One statement for the few rescored chunks (a JSON array of rowids), cheaper than a read each;
    // by rowid: one B-tree, not the (model, chunk_id) index first.
    denseOfRows: db.prepare<[string], { rowid: number; model: string; chunk_id: string; dense: Buffer }>(
      'SELECT rowid, model, chunk_id, dense FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))',
    ),
    // (by id: those whose rowid is unknown or no longer theirs)
    denseOfMany: db.prepare<[string, string], { chunk_id: string; dense: Buffer }>(
      'SELECT chunk_id, dense FROM chunks WHERE model = ? AND chunk_id IN (SELECT value FROM json_each(?))',
    ),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    chunksOfModel: db.prepare<[string], ChunkRow>('SELECT rowid, * FROM chunks WHERE model = ?'),
    chunksOfMemo: db.prepare<[string, string], ChunkRow>('SELECT rowid, * FROM chunks WHERE memo_id = ? AND model = ? ORDER BY idx'),
    chunksOfMemoBetween: db.prepare<[string, string, number, number], ChunkRow>(
      'SELECT rowid, * FROM chunks WHERE memo_id = ? AND model = ? AND idx >= ? AND idx < ? ORDER BY idx',
    ),
    deleteMemoChunks: db.prepare<[string]>('DELETE FROM chunks WHERE memo_id = ?'),
    deleteOlderRevisions: db.prepare<[string, number]>('DELETE FROM chunks WHERE memo_id = ? AND revision < ?'),
    // What a memo's new chunks under a model did not replace: those of another revision, or past their count.
    deleteLeftoverChunks: db.prepare<[string, string, number, number]>(
      'DELETE FROM chunks WHERE memo_id = ? AND model = ? AND (revision <> ? OR idx >= ?)',
    ),
    deleteModelChunks: db.prepare<[string]>('DELETE FROM chunks WHERE model = ?'),
    insertChunk: db.prepare(
      `INSERT OR REPLACE INTO chunks (model, chunk_id, memo_id, project_id, revision, idx, content, dense, terms)
       VALUES (@model, @chunk_id, @memo_id, @project_id, @revision, @idx, @content, @dense, @terms)`,
    ),
    logChange: db.prepare<[string, string | null, number]>('INSERT INTO changes (memo_id, model, at) VALUES (?, ?, ?)'),
    logChunkRange: db.prepare<[string, string, number, number, number]>(
      'INSERT INTO changes (memo_id, model, at, from_idx, to_idx) VALUES (?, ?, ?, ?, ?)',
    ),
    changesSince: db.prepare<[number], { seq: number; memo_id: string; model: string | null; from_idx: number | null; to_idx: number | null }>(
      'SELECT seq, memo_id, model, from_idx, to_idx FROM changes WHERE seq > ? ORDER BY seq',
    ),
    changedSince: db.prepare<[number], { memo_id: string; model: string | null }>('SELECT DISTINCT memo_id, model FROM changes WHERE seq > ?'),
    minSeq: db.prepare<[], { s: number | null }>('SELECT MIN(seq) AS s FROM changes'),
    maxSeq: db.prepare<[], { s: number | null }>('SELECT MAX(seq) AS s FROM changes'),
    prune: db.prepare<[number]>('DELETE FROM changes WHERE at < ?'),
  };
}

/** In `changes.model` of a memo's change: its chunks changed under every model. */
export const ALL_MODELS = '*';

/** The indices `from <= idx < to` of a memo's chunks (a change's, or what sync reloads). */
export interface ChunkRange {
  from: number;
  to: number;
}
export const ALL_CHUNKS: ChunkRange = Object.freeze({ from: 0, to: Infinity });

/** The one range spanning both, or either one alone. */
export function spanning(a: ChunkRange | undefined, b: ChunkRange | undefined): ChunkRange | undefined {
  if (!a || !b) return a ?? b;
  return { from: Math.min(a.from, b.from), to: Math.max(a.to, b.to) };
}
