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
  /** The chunk's distinct term ids (their frequencies live in the postings). */
  termIds: Uint32Array;
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
  /** Each slot's chunk length in terms (BM25's dl), beside the vectors for tight loops. */
  private lengths: Float32Array;
  /** Per-query scratch for BM25 sums, indexed by slot; only the touched entries are reset. */
  private scratch = new Float64Array(0);
  private readonly slots: (StoredChunk | undefined)[] = [];
  private readonly byMemo = new Map<string, number[]>();
  private readonly postings = new Map<string, Map<number, Postings>>();
  private readonly df = new Map<number, number>();
  private liveCount = 0;
  private deadCount = 0;
  /** Bumped on every change, so cached slot sets know when they are stale. */
  private mutations = 0;
  private readonly slotSets = new WeakMap<Map<string, number>, { mutations: number; slots: Int32Array; mask: Uint8Array }>();
  /** Sum of the live chunks' lengths in terms: BM25's average length is this over `liveCount`. */
  private totalLength = 0;

  constructor(readonly dimension: number, initialCapacity = 1024) {
    this.vectors = new Float32Array(initialCapacity * dimension);
    this.lengths = new Float32Array(initialCapacity);
  }

  get live(): number {
    return this.liveCount;
  }

  /** Adds a chunk with its vector and its term frequencies (`termFrequencies` of its text). */
  add(chunk: Omit<StoredChunk, 'termIds'>, dense: Float32Array, terms: EncodedDocument): void {
    if (dense.length !== this.dimension) {
      throw new Error(`vector of dimension ${dense.length} for a model of dimension ${this.dimension}`);
    }
    const slot = this.slots.length;
    if ((slot + 1) * this.dimension > this.vectors.length) {
      const grown = new Float32Array(Math.max(this.vectors.length * 2, (slot + 1) * this.dimension));
      grown.set(this.vectors);
      this.vectors = grown;
      const lengths = new Float32Array(grown.length / this.dimension);
      lengths.set(this.lengths);
      this.lengths = lengths;
    }
    this.vectors.set(dense, slot * this.dimension);
    this.lengths[slot] = terms.length;
    this.slots.push({ ...chunk, termIds: Uint32Array.from(terms.indices) });
    const list = this.byMemo.get(chunk.memoId);
    if (list) list.push(slot);
    else this.byMemo.set(chunk.memoId, [slot]);
    let projectPostings = this.postings.get(chunk.projectId);
    if (!projectPostings) {
      projectPostings = new Map();
      this.postings.set(chunk.projectId, projectPostings);
    }
    const { indices, values } = terms;
    for (let i = 0; i < indices.length; i++) {
      const term = indices[i]!;
      let p = projectPostings.get(term);
      if (!p) {
        p = { slots: [], tfs: [] };
        projectPostings.set(term, p);
      }
      p.slots.push(slot);
      p.tfs.push(values[i]!);
      this.df.set(term, (this.df.get(term) ?? 0) + 1);
    }
    this.liveCount += 1;
    this.totalLength += terms.length;
    this.mutations += 1;
  }

  removeMemo(memoId: string): void {
    const list = this.byMemo.get(memoId);
    if (!list) return;
    for (const slot of list) {
      const chunk = this.slots[slot];
      if (!chunk) continue;
      this.totalLength -= this.lengths[slot]!;
      for (const term of chunk.termIds) {
        const n = (this.df.get(term) ?? 1) - 1;
        if (n <= 0) this.df.delete(term);
        else this.df.set(term, n);
      }
      this.slots[slot] = undefined;
      this.liveCount -= 1;
      this.deadCount += 1;
    }
    this.byMemo.delete(memoId);
    this.mutations += 1;
    if (this.deadCount > 4096 && this.deadCount > this.liveCount) this.compact();
  }

  /** Drops dead slots: live ones move down, and postings and memo lists follow them. */
  private compact(): void {
    const dim = this.dimension;
    const remap = new Int32Array(this.slots.length).fill(-1);
    const capacity = Math.max(1024, this.liveCount * 2);
    const vectors = new Float32Array(capacity * dim);
    const lengths = new Float32Array(capacity);
    const slots: StoredChunk[] = [];
    this.slots.forEach((chunk, old) => {
      if (!chunk) return;
      const slot = slots.length;
      remap[old] = slot;
      vectors.set(this.vectors.subarray(old * dim, (old + 1) * dim), slot * dim);
      lengths[slot] = this.lengths[old]!;
      slots.push(chunk);
    });
    for (const terms of this.postings.values()) {
      for (const [term, p] of terms) {
        const kept: Postings = { slots: [], tfs: [] };
        p.slots.forEach((old, i) => {
          if (remap[old]! >= 0) {
            kept.slots.push(remap[old]!);
            kept.tfs.push(p.tfs[i]!);
          }
        });
        if (kept.slots.length > 0) terms.set(term, kept);
        else terms.delete(term);
      }
    }
    for (const [memoId, list] of this.byMemo) this.byMemo.set(memoId, list.map((old) => remap[old]!));
    this.slots.length = 0;
    this.slots.push(...slots);
    this.vectors = vectors;
    this.lengths = lengths;
    this.deadCount = 0;
    this.mutations += 1;
  }

  /**
   * The findable slots for a set of eligible memos (chunks of those memos at their revision), as a
   * list for scans and a mask for postings. Cached per eligible set until this model changes, so
   * repeated queries with the same filters pay for it once.
   */
  private findable(eligible: Map<string, number>): { slots: Int32Array; mask: Uint8Array } {
    const cached = this.slotSets.get(eligible);
    if (cached && cached.mutations === this.mutations) return cached;
    const list: number[] = [];
    for (const [memoId, revision] of eligible) {
      for (const slot of this.byMemo.get(memoId) ?? []) if (this.slots[slot]?.revision === revision) list.push(slot);
    }
    list.sort((a, b) => a - b);
    const slots = Int32Array.from(list);
    const mask = new Uint8Array(this.slots.length);
    for (const slot of slots) mask[slot] = 1;
    const entry = { mutations: this.mutations, slots, mask };
    this.slotSets.set(eligible, entry);
    return entry;
  }

  /** Findable chunks: those of eligible memos at the eligible revision. */
  count(eligible: Map<string, number>): number {
    return this.findable(eligible).slots.length;
  }

  searchDense(query: Float32Array, eligible: Map<string, number>, limit: number, catalog: CatalogMemory): ChunkCandidate[] {
    const dim = this.dimension;
    const vectors = this.vectors;
    const top = new TopK<number>(limit);
    const { slots } = this.findable(eligible);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
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
      if (dot > top.threshold) top.offer(dot, slot);
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
    const { mask } = this.findable(eligible);
    if (this.scratch.length < this.slots.length) this.scratch = new Float64Array(this.slots.length * 2);
    const scores = this.scratch;
    const lengths = this.lengths;
    const touched: number[] = [];
    const base = k1 * (1 - b);
    const perLength = (k1 * b) / avgdl;
    for (let i = 0; i < query.indices.length; i++) {
      const term = query.indices[i]!;
      const postings = terms.get(term);
      const df = this.df.get(term);
      if (!postings || !df) continue;
      const weight = idf(this.liveCount, df) * query.values[i]! * (k1 + 1);
      const { slots, tfs } = postings;
      for (let j = 0; j < slots.length; j++) {
        const slot = slots[j]!;
        if (mask[slot] !== 1) continue;
        const tf = tfs[j]!;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += (weight * tf) / (tf + base + perLength * lengths[slot]!);
      }
    }
    const top = new TopK<number>(limit);
    for (const slot of touched) {
      const score = scores[slot]!;
      scores[slot] = 0;
      if (score > top.threshold) top.offer(score, slot);
    }
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
