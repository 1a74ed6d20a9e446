/**
 * The in-memory side of the embedded index: the catalog and, per model, a dense matrix and an
 * inverted index. Searches are exact scans over the chunks of the memos the filters allow.
 */
import { matchesFilters, type Filter, type FilterableMemo, type MemoAttributes } from '@memex/contracts';
import { DEFAULT_BM25_OPTIONS, idf, type EncodedDocument, type SparseVector } from '@memex/text';
import type { CatalogEntry, ChunkCandidate } from './port';
import { TopK } from './topK';

export interface StoredChunk {
  chunkId: string;
  memoId: string;
  projectId: string;
  revision: number;
  index: number;
  content: string;
  /** Term frequencies and length in terms, for BM25. */
  terms: EncodedDocument;
}

interface Postings {
  slots: number[];
  /** The term's frequency in each slot's chunk. */
  tfs: number[];
}

function filterable(memo: MemoAttributes): FilterableMemo {
  return {
    title: memo.title,
    source: memo.source,
    clientReferenceId: memo.clientReferenceId,
    tags: memo.tags,
    metadata: memo.metadata,
  };
}

/** Memos the catalog knows, by id and by project, with a change counter per project for caches. */
export class CatalogMemory {
  readonly entries = new Map<string, CatalogEntry>();
  private readonly byProject = new Map<string, Set<string>>();
  private readonly generations = new Map<string, number>();
  /** memo id → current revision, for the memos a (project, filters) pair allows. */
  private readonly eligibleCache = new Map<string, { generation: number; memos: Map<string, number> }>();

  set(entry: CatalogEntry): void {
    const previous = this.entries.get(entry.memoId);
    if (previous && previous.projectId !== entry.projectId) this.byProject.get(previous.projectId)?.delete(entry.memoId);
    this.entries.set(entry.memoId, entry);
    let set = this.byProject.get(entry.projectId);
    if (!set) {
      set = new Set();
      this.byProject.set(entry.projectId, set);
    }
    set.add(entry.memoId);
    this.generations.set(entry.projectId, (this.generations.get(entry.projectId) ?? 0) + 1);
  }

  clear(): void {
    this.entries.clear();
    this.byProject.clear();
    this.generations.clear();
    this.eligibleCache.clear();
  }

  /**
   * The memos of the project that are live, not archived and pass every filter, each with the
   * revision its findable chunks must have. Cached per (project, filters) until the project changes.
   */
  eligible(projectId: string, filters: readonly Filter[]): Map<string, number> {
    const generation = this.generations.get(projectId) ?? 0;
    const key = `${projectId}\u0000${JSON.stringify(filters)}`;
    const cached = this.eligibleCache.get(key);
    if (cached && cached.generation === generation) return cached.memos;
    const memos = new Map<string, number>();
    for (const memoId of this.byProject.get(projectId) ?? []) {
      const memo = this.entries.get(memoId)?.memo;
      if (!memo || memo.archived) continue;
      if (filters.length > 0 && !matchesFilters(filterable(memo), filters)) continue;
      memos.set(memoId, memo.revision);
    }
    if (this.eligibleCache.size >= 512) this.eligibleCache.delete(this.eligibleCache.keys().next().value!);
    this.eligibleCache.set(key, { generation, memos });
    return memos;
  }
}

/** One model's chunks: vectors in one growable Float32Array, postings per project and term. */
export class ModelMemory {
  private vectors: Float32Array;
  private readonly slots: (StoredChunk | undefined)[] = [];
  private readonly byMemo = new Map<string, number[]>();
  private readonly postings = new Map<string, Map<number, Postings>>();
  private readonly df = new Map<number, number>();
  private liveCount = 0;
  private deadCount = 0;
  /** Sum of the live chunks' lengths in terms: BM25's average length is this over `liveCount`. */
  private totalLength = 0;

  constructor(readonly dimension: number, initialCapacity = 1024) {
    this.vectors = new Float32Array(initialCapacity * dimension);
  }

  get live(): number {
    return this.liveCount;
  }

  add(chunk: StoredChunk, dense: Float32Array): void {
    if (dense.length !== this.dimension) {
      throw new Error(`vector of dimension ${dense.length} for a model of dimension ${this.dimension}`);
    }
    const slot = this.slots.length;
    if ((slot + 1) * this.dimension > this.vectors.length) {
      const grown = new Float32Array(Math.max(this.vectors.length * 2, (slot + 1) * this.dimension));
      grown.set(this.vectors);
      this.vectors = grown;
    }
    this.vectors.set(dense, slot * this.dimension);
    this.slots.push(chunk);
    const list = this.byMemo.get(chunk.memoId);
    if (list) list.push(slot);
    else this.byMemo.set(chunk.memoId, [slot]);
    let terms = this.postings.get(chunk.projectId);
    if (!terms) {
      terms = new Map();
      this.postings.set(chunk.projectId, terms);
    }
    const { indices, values } = chunk.terms;
    for (let i = 0; i < indices.length; i++) {
      const term = indices[i]!;
      let p = terms.get(term);
      if (!p) {
        p = { slots: [], tfs: [] };
        terms.set(term, p);
      }
      p.slots.push(slot);
      p.tfs.push(values[i]!);
      this.df.set(term, (this.df.get(term) ?? 0) + 1);
    }
    this.liveCount += 1;
    this.totalLength += chunk.terms.length;
  }

  removeMemo(memoId: string): void {
    const list = this.byMemo.get(memoId);
    if (!list) return;
    for (const slot of list) {
      const chunk = this.slots[slot];
      if (!chunk) continue;
      this.totalLength -= chunk.terms.length;
      for (const term of chunk.terms.indices) {
        const n = (this.df.get(term) ?? 1) - 1;
        if (n <= 0) this.df.delete(term);
        else this.df.set(term, n);
      }
      this.slots[slot] = undefined;
      this.liveCount -= 1;
      this.deadCount += 1;
    }
    this.byMemo.delete(memoId);
    if (this.deadCount > 4096 && this.deadCount > this.liveCount) this.compact();
  }

  /** Rebuilds without dead slots (postings keep referring to slots, so both are rebuilt). */
  private compact(): void {
    const live: { chunk: StoredChunk; dense: Float32Array }[] = [];
    this.slots.forEach((chunk, slot) => {
      if (chunk) live.push({ chunk, dense: this.vectors.slice(slot * this.dimension, (slot + 1) * this.dimension) });
    });
    this.slots.length = 0;
    this.byMemo.clear();
    this.postings.clear();
    this.df.clear();
    this.liveCount = 0;
    this.deadCount = 0;
    this.totalLength = 0;
    this.vectors = new Float32Array(Math.max(1024, live.length * 2) * this.dimension);
    for (const { chunk, dense } of live) this.add(chunk, dense);
  }

  /** Findable chunks: those of eligible memos at the eligible revision. */
  count(eligible: Map<string, number>): number {
    let n = 0;
    for (const [memoId, revision] of eligible) {
      for (const slot of this.byMemo.get(memoId) ?? []) if (this.slots[slot]?.revision === revision) n += 1;
    }
    return n;
  }

  searchDense(query: Float32Array, eligible: Map<string, number>, limit: number, catalog: CatalogMemory): ChunkCandidate[] {
    const dim = this.dimension;
    const vectors = this.vectors;
    const top = new TopK<number>(limit);
    for (const [memoId, revision] of eligible) {
      const list = this.byMemo.get(memoId);
      if (!list) continue;
      for (const slot of list) {
        if (this.slots[slot]?.revision !== revision) continue;
        let dot = 0;
        const base = slot * dim;
        let d = 0;
        for (; d + 3 < dim; d += 4) {
          dot +=
            vectors[base + d]! * query[d]! +
            vectors[base + d + 1]! * query[d + 1]! +
            vectors[base + d + 2]! * query[d + 2]! +
            vectors[base + d + 3]! * query[d + 3]!;
        }
        for (; d < dim; d++) dot += vectors[base + d]! * query[d]!;
        top.offer(dot, slot);
      }
    }
    return top.sorted().map(({ score, item }) => this.candidate(item, score, catalog));
  }

  searchSparse(
    query: SparseVector,
    projectId: string,
    eligible: Map<string, number>,
    limit: number,
    catalog: CatalogMemory,
  ): ChunkCandidate[] {
    const terms = this.postings.get(projectId);
    if (!terms) return [];
    // BM25 with the collection's live average length: tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)).
    const { k1, b } = DEFAULT_BM25_OPTIONS;
    const avgdl = this.liveCount > 0 ? Math.max(1, this.totalLength / this.liveCount) : 1;
    const scores = new Map<number, number>();
    for (let i = 0; i < query.indices.length; i++) {
      const term = query.indices[i]!;
      const postings = terms.get(term);
      const df = this.df.get(term);
      if (!postings || !df) continue;
      const weight = idf(this.liveCount, df) * query.values[i]!;
      const { slots, tfs } = postings;
      for (let j = 0; j < slots.length; j++) {
        const slot = slots[j]!;
        const chunk = this.slots[slot];
        if (!chunk || eligible.get(chunk.memoId) !== chunk.revision) continue;
        const tf = tfs[j]!;
        const bm25 = (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * chunk.terms.length) / avgdl));
        scores.set(slot, (scores.get(slot) ?? 0) + weight * bm25);
      }
    }
    const top = new TopK<number>(limit);
    for (const [slot, score] of scores) top.offer(score, slot);
    return top.sorted().map(({ score, item }) => this.candidate(item, score, catalog));
  }

  private candidate(slot: number, score: number, catalog: CatalogMemory): ChunkCandidate {
    const chunk = this.slots[slot]!;
    const memo = catalog.entries.get(chunk.memoId)?.memo;
    return {
      chunkId: chunk.chunkId,
      memoId: chunk.memoId,
      chunkIndex: chunk.index,
      content: chunk.content,
      memoTitle: memo?.title ?? '',
      memoSummary: memo?.summary ?? '',
      score,
    };
  }
}
