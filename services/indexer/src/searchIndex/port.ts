import type { Filter, MemoAttributes } from '@memex/contracts';
import type { EncodedDocument, SparseVector } from '@memex/text';

/** What a memo event says about a memo's filterable attributes, at a stream version. */
export interface CatalogUpdate {
  memoId: string;
  projectId: string;
  /** The memo stream version of the event. */
  version: number;
  /** Attributes after the event; `null` means the memo was deleted. */
  memo: MemoAttributes | null;
}

export interface CatalogEntry {
  memoId: string;
  projectId: string;
  version: number;
  /** `null` once deleted (the entry stays as a tombstone so late events cannot revive the memo). */
  memo: MemoAttributes | null;
}

/** One chunk of a memo revision, embedded with one model. */
export interface IndexedChunk {
  chunkId: string;
  index: number;
  content: string;
  /** L2-normalised dense vector of the model's dimension. */
  dense: Float32Array;
  /**
   * The chunk's analyzed terms with their frequencies and its length in terms (`termFrequencies`).
   * Each index turns them into BM25: the embedded one at query time with the live average length,
   * Qdrant at write time with a configured one.
   */
  terms: EncodedDocument;
}

/** One memo revision's chunks, for `putChunksOfMemos`. */
export interface ChunksOfMemo {
  memo: { memoId: string; projectId: string; revision: number };
  chunks: readonly IndexedChunk[];
}

/** A stored chunk's text, for re-embedding it (e.g. under a new memo title). */
export interface StoredChunkText {
  chunkId: string;
  revision: number;
  index: number;
  content: string;
}

export interface CandidateQuery {
  projectId: string;
  filters: readonly Filter[];
  /** Candidates to return, best first. */
  limit: number;
  /**
   * Dense ranking: how many of the best candidates need exact scores (default: all). An index that
   * ranks by compressed vectors and rescores from disk rescores only these; the rest keep estimates.
   */
  exactTop?: number;
}

export interface ChunkCandidate {
  chunkId: string;
  memoId: string;
  chunkIndex: number;
  content: string;
  memoTitle: string;
  memoSummary: string;
  /** Dense: cosine similarity. Sparse: BM25 score (sum over query terms of idf × document weight). */
  score: number;
  /**
   * A number that tells the chunk apart from the other candidates of the same search, if the index
   * has one (the embedded index: its row): fusion matches the two rankings' candidates by it, a
   * numeric key costing a fifth of the id's string hashing. Absent: matched by `chunkId`.
   */
  key?: number;
}

/**
 * The indexer's store: a catalog of memo attributes (what filters read) and, per embedding model,
 * the chunks of each memo's current revision with a dense and a sparse vector.
 *
 * A chunk can be found only while its memo is in the catalog, in the same project, not deleted, not
 * archived, at the chunk's revision, and passes every filter (exactly as `matchesFilters` says).
 * Filters are applied before ranking, so a selective filter still returns its best matches.
 */
export interface SearchIndex {
  readonly kind: 'embedded' | 'qdrant';

  /**
   * Records a memo's attributes at `version`; an update older than (or as old as) what is stored is
   * ignored. A deletion removes every chunk of the memo under every model. A newer revision makes
   * the older revision's chunks unfindable at once (and removes them). Returns whether it applied.
   */
  applyCatalog(update: CatalogUpdate): Promise<boolean>;
  /**
   * `applyCatalog` of each update in order, in as few writes as the store can without holding up
   * searches (the embedded index: a transaction per slice, searches answered between); whether each applied.
   */
  applyCatalogs(updates: readonly CatalogUpdate[]): Promise<boolean[]>;
  getCatalog(memoId: string): Promise<CatalogEntry | undefined>;

  /** Makes room for a model's chunks (idempotent). */
  openModel(model: string, dimension: number): Promise<void>;
  /**
   * Replaces the memo's chunks under `model` with these chunks of `revision`, unless the catalog
   * already knows a newer revision or the deletion of the memo (then nothing is stored and the
   * result is false). Chunks of a memo the catalog has not seen yet are stored and become findable
   * when the catalog catches up.
   */
  putChunks(model: string, memo: { memoId: string; projectId: string; revision: number }, chunks: readonly IndexedChunk[]): Promise<boolean>;
  /** `putChunks` of several memos under one model, written as `applyCatalogs` writes; whether each was stored. */
  putChunksOfMemos(model: string, items: readonly ChunksOfMemo[]): Promise<boolean[]>;

  /** The stored chunks of a memo under `model` (any revision stored), in order; empty if none. */
  getChunks(model: string, memoId: string): Promise<StoredChunkText[]>;

  searchDense(model: string, vector: Float32Array, query: CandidateQuery): Promise<ChunkCandidate[]>;
  searchSparse(model: string, vector: SparseVector, query: CandidateQuery): Promise<ChunkCandidate[]>;

  /** Findable chunks under `model` (optionally of one project). */
  countChunks(model: string, projectId?: string): Promise<number>;
  /** Removes everything stored for a model (after switching away from it). */
  dropModel(model: string): Promise<void>;
  close(): Promise<void>;
}
