import type { Filter, FilterableMemo, MemoView, TagRecord } from '@memex/contracts';

/** One memo as the read model keeps it: the GET body, its project, and the stream version it reflects. */
export interface MemoRecord {
  projectId: string;
  /** The memo stream version this record reflects; writes of older versions are ignored. */
  version: number;
  memo: MemoView;
}

export interface TitleSearch {
  mode: 'contains' | 'startswith';
  query: string;
  filters: readonly Filter[];
  limit: number;
}

export interface MemoListPage {
  filters: readonly Filter[];
  offset: number;
  limit: number;
}

/**
 * Memos as clients read them, kept by the memo service right after each append (and again from the
 * outbox after a crash), so GET after POST finds the memo.
 */
export interface MemoReadModel {
  readonly kind: 'sqlite' | 'mongodb';
  get(memoId: string): Promise<MemoRecord | undefined>;
  findByReference(projectId: string, referenceId: string): Promise<MemoRecord | undefined>;
  /** Stores the record unless one with the same or a higher version (or a removal) is already there. */
  upsert(record: MemoRecord): Promise<void>;
  /** Deletes the memo's row; keeps only its id and version so a late, older write cannot bring it back. */
  remove(projectId: string, memoId: string, version: number): Promise<void>;
  /**
   * Live (not archived) memos of the project whose title contains (case-insensitively) or starts with
   * (case-insensitively) the query and that pass every filter, ordered by title, then id.
   */
  searchTitles(projectId: string, search: TitleSearch): Promise<MemoRecord[]>;
  /**
   * One page of the project's memos that pass every filter (archived ones included), newest first
   * (created_at, then id, descending), and how many pass in all.
   */
  listMemos(projectId: string, page: MemoListPage): Promise<{ records: MemoRecord[]; count: number }>;
  /** Memos not yet archived whose expiration date is at or before `now`. */
  dueForArchive(now: string, limit: number): Promise<{ projectId: string; memoId: string }[]>;
  /** The earliest expiration date of a memo not yet archived. */
  nextExpiration(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** What filters look at in a memo; its tags may be names only (the SQLite read model's stored form). */
export function filterable(memo: Omit<MemoView, 'tags'> & { tags: readonly (TagRecord | string)[] }): FilterableMemo {
  return {
    title: memo.title,
    source: memo.source,
    clientReferenceId: memo.client_reference_id,
    tags: memo.tags.map((t) => (typeof t === 'string' ? t : t.tag)),
    metadata: memo.metadata,
  };
}

/** The case folding title searches use, on every backend. */
export function foldTitle(title: string): string {
  return title.toLowerCase();
}
