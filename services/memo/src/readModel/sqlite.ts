import { matchesFilters } from '@memex/contracts';
import { groupCommit, inTransaction, openSqlite, type GroupCommit, type SqliteDatabase } from '@memex/runtime';
import { filterable, foldTitle, type MemoListPage, type MemoReadModel, type MemoRecord, type TitleSearch } from './port';
import { readDoc, wholeDoc, writeDoc, type StoredDoc } from './sqliteDocs';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS memos (
  memo_id          TEXT PRIMARY KEY,
  project_id       TEXT NOT NULL,
  version          INTEGER NOT NULL,
  reference_id     TEXT,
  title_folded     TEXT NOT NULL,
  archived         INTEGER NOT NULL,
  expiration_date  TEXT,
  doc              TEXT NOT NULL, -- the memo's JSON text, or its lean form deflated as a BLOB (see sqliteDocs)
  created_at       TEXT           -- from doc; NULL in rows written before the column (see CREATED)
);
CREATE INDEX IF NOT EXISTS memos_reference ON memos (project_id, reference_id) WHERE reference_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS memos_title ON memos (project_id, title_folded, memo_id);
CREATE INDEX IF NOT EXISTS memos_expiry ON memos (expiration_date) WHERE archived = 0 AND expiration_date IS NOT NULL;
CREATE TABLE IF NOT EXISTS removed_memos (
  memo_id    TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  version    INTEGER NOT NULL
);
`;

/**
 * A memo's creation time, what lists are ordered by: its own column, or for rows an older version
 * wrote (doc as JSON text, no column), read from the doc (COALESCE stops at the column, so a
 * deflated doc is never parsed).
 */
const CREATED = "COALESCE(created_at, json_extract(doc, '$.created_at'))";

/** Columns added since the table was first made, and indexes replaced: run once per file, in one transaction. */
const MIGRATIONS = `
DROP INDEX IF EXISTS memos_created;
CREATE INDEX IF NOT EXISTS memos_by_created ON memos (project_id, ${CREATED} DESC, memo_id DESC);
`;

interface Row {
  project_id: string;
  version: number;
  doc: string | Buffer;
}

const record = (row: Row, doc: StoredDoc): MemoRecord => ({ projectId: row.project_id, version: row.version, memo: wholeDoc(doc) });
const toRecord = (row: Row): MemoRecord => record(row, readDoc(row.doc));

/** The embedded read model: a table beside the event store in the memo service's SQLite file. */
export class SqliteMemoReadModel implements MemoReadModel {
  readonly kind = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  /** Shared with the event store on the same connection: one commit for a turn's writes. */
  private readonly commits: GroupCommit;
  private readonly stmts;

  /** `compact: false` writes documents as JSON text, the form the version before reads (see formats.ts); both are read. */
  constructor(
    pathOrDb: string | SqliteDatabase,
    private readonly options: { compact?: boolean } = {},
  ) {
    this.db = typeof pathOrDb === 'string' ? openSqlite(pathOrDb) : pathOrDb;
    this.commits = groupCommit(this.db);
    this.db.exec(SCHEMA);
    // (several memo processes may open the file at once: one of them migrates, the others see it done)
    inTransaction(
      this.db,
      () => {
        const columns = this.db.prepare<[], { name: string }>('PRAGMA table_info(memos)').all();
        if (!columns.some((c) => c.name === 'created_at')) this.db.exec('ALTER TABLE memos ADD COLUMN created_at TEXT');
        this.db.exec(MIGRATIONS);
      },
      { immediate: true },
    );
    this.stmts = {
      get: this.db.prepare<[string], Row>('SELECT project_id, version, doc FROM memos WHERE memo_id = ?'),
      byReference: this.db.prepare<[string, string], Row>(
        'SELECT project_id, version, doc FROM memos WHERE project_id = ? AND reference_id = ? ORDER BY version DESC LIMIT 1',
      ),
      removedVersion: this.db.prepare<[string], { version: number }>('SELECT version FROM removed_memos WHERE memo_id = ?'),
      upsert: this.db.prepare(
        `INSERT INTO memos (memo_id, project_id, version, reference_id, title_folded, archived, expiration_date, doc, created_at)
         VALUES (@memo_id, @project_id, @version, @reference_id, @title_folded, @archived, @expiration_date, @doc, @created_at)
         ON CONFLICT (memo_id) DO UPDATE SET
           version = excluded.version, reference_id = excluded.reference_id, title_folded = excluded.title_folded,
           archived = excluded.archived, expiration_date = excluded.expiration_date, doc = excluded.doc, created_at = excluded.created_at
         WHERE excluded.version > memos.version`,
      ),
      remove: this.db.prepare<[string]>('DELETE FROM memos WHERE memo_id = ?'),
      tombstone: this.db.prepare<[string, string, number]>(
        `INSERT INTO removed_memos (memo_id, project_id, version) VALUES (?, ?, ?)
         ON CONFLICT (memo_id) DO UPDATE SET version = MAX(version, excluded.version)`,
      ),
      // The range uses the title index (UTF-8 byte order is code point order); instr() makes it exact.
      titlesPrefix: this.db.prepare<[string, string, string, string], Row>(
        `SELECT project_id, version, doc FROM memos
         WHERE project_id = ? AND archived = 0 AND title_folded >= ? AND title_folded < ? || char(1114111)
           AND instr(title_folded, ?) = 1
         ORDER BY title_folded, memo_id`,
      ),
      titlesContaining: this.db.prepare<[string, string], Row>(
        `SELECT project_id, version, doc FROM memos
         WHERE project_id = ? AND archived = 0 AND instr(title_folded, ?) > 0
         ORDER BY title_folded, memo_id`,
      ),
      listPage: this.db.prepare<[string, number, number], Row>(
        `SELECT project_id, version, doc FROM memos WHERE project_id = ?
         ORDER BY ${CREATED} DESC, memo_id DESC LIMIT ? OFFSET ?`,
      ),
      listAll: this.db.prepare<[string], Row>(
        `SELECT project_id, version, doc FROM memos WHERE project_id = ?
         ORDER BY ${CREATED} DESC, memo_id DESC`,
      ),
      countAll: this.db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM memos WHERE project_id = ?'),
      due: this.db.prepare<[string, number], { project_id: string; memo_id: string }>(
        `SELECT project_id, memo_id FROM memos
         WHERE archived = 0 AND expiration_date IS NOT NULL AND expiration_date <= ? ORDER BY expiration_date LIMIT ?`,
      ),
      next: this.db.prepare<[], { d: string | null }>(
        'SELECT MIN(expiration_date) AS d FROM memos WHERE archived = 0 AND expiration_date IS NOT NULL',
      ),
    };
  }

  async get(memoId: string): Promise<MemoRecord | undefined> {
    const row = this.stmts.get.get(memoId);
    return row ? toRecord(row) : undefined;
  }

  async findByReference(projectId: string, referenceId: string): Promise<MemoRecord | undefined> {
    const row = this.stmts.byReference.get(projectId, referenceId);
    return row ? toRecord(row) : undefined;
  }

  async upsert(record: MemoRecord): Promise<void> {
    await this.commits.run(() => {
      const removed = this.stmts.removedVersion.get(record.memo.uuid);
      if (removed && removed.version >= record.version) return;
      this.stmts.upsert.run({
        memo_id: record.memo.uuid,
        project_id: record.projectId,
        version: record.version,
        reference_id: record.memo.client_reference_id,
        title_folded: foldTitle(record.memo.title),
        archived: record.memo.archived ? 1 : 0,
        expiration_date: record.memo.expiration_date,
        doc: writeDoc(record.memo, { compact: this.options.compact !== false }),
        created_at: record.memo.created_at,
      });
    });
  }

  async remove(projectId: string, memoId: string, version: number): Promise<void> {
    await this.commits.run(() => {
      this.stmts.tombstone.run(memoId, projectId, version);
      this.stmts.remove.run(memoId);
    });
  }

  async searchTitles(projectId: string, { mode, query, filters, limit }: TitleSearch): Promise<MemoRecord[]> {
    const needle = foldTitle(query);
    const rows =
      mode === 'startswith'
        ? this.stmts.titlesPrefix.iterate(projectId, needle, needle, needle)
        : this.stmts.titlesContaining.iterate(projectId, needle);
    const out: MemoRecord[] = [];
    for (const row of rows) {
      // Tag ids are derived only for the memos that pass.
      const doc = readDoc(row.doc);
      if (!matchesFilters(filterable(doc), filters)) continue;
      out.push(record(row, doc));
      if (out.length >= limit) break;
    }
    return out;
  }

  async listMemos(projectId: string, { filters, offset, limit }: MemoListPage): Promise<{ records: MemoRecord[]; count: number }> {
    if (filters.length === 0) {
      // One read transaction, so the page and the count agree.
      return inTransaction(this.db, () => ({
        records: this.stmts.listPage.all(projectId, limit, offset).map(toRecord),
        count: this.stmts.countAll.get(projectId)?.n ?? 0,
      }));
    }
    const records: MemoRecord[] = [];
    let count = 0;
    for (const row of this.stmts.listAll.iterate(projectId)) {
      const doc = readDoc(row.doc);
      if (!matchesFilters(filterable(doc), filters)) continue;
      if (count >= offset && records.length < limit) records.push(record(row, doc));
      count++;
    }
    return { records, count };
  }

  async dueForArchive(now: string, limit: number) {
    return this.stmts.due.all(now, limit).map((r) => ({ projectId: r.project_id, memoId: r.memo_id }));
  }

  async nextExpiration(): Promise<string | undefined> {
    return this.stmts.next.get()?.d ?? undefined;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
