/**
 * BM25 over one model's chunks, per project: every statistic (document count, document frequency,
 * average length) is the caller's project's alone; top-k by MaxScore in the native addon (terms
 * whose summed upper bounds cannot reach the current k-th score are only probed, never walked),
 * equal to scoring every posting.
 */
import { sparseTopK, type SparseScan, type SparseTerm } from '@memex/vector-scan';
import { DEFAULT_BM25_OPTIONS, idf, type EncodedDocument, type SparseVector } from '@memex/text';
import type { SlotStore } from './slots';
import { TopK } from '../topK';

/** One term's postings in one project: slots ascending, with the term's frequency in each. */
interface Postings {
  slots: Int32Array;
  tfs: Uint16Array;
  n: number;
  /** Live chunks of the project holding the term (dead slots stay listed until compaction). */
  df: number;
  /** Max over the postings of tf / (tf + k1·(1 − b + b·dl/avgdl)) at avgdl = `boundAvgdl`. */
  bound: number;
  boundAvgdl: number;
}

/** A project's inverted index and its BM25 statistics. */
export interface ProjectPostings {
  postings: Map<number, Postings>;
  /** Live chunks and the sum of their lengths in terms (BM25's N and avgdl, per project). */
  chunks: number;
  totalLength: number;
}

/** tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl)) without the (k1+1), which the term weight carries. */
function saturation(tf: number, length: number, avgdl: number): number {
  const { k1, b } = DEFAULT_BM25_OPTIONS;
  return tf / (tf + k1 * (1 - b) + ((k1 * b) / avgdl) * length);
}

/** A query term in a project's postings, as both BM25 searches walk them (the addon's term, and its position in the query). */
interface QueryTerm extends SparseTerm {
  q: number;
}

/** Adds a chunk's term frequencies to its project's postings (its slot: the highest so far). */
export function addPostings(project: ProjectPostings, slot: number, terms: EncodedDocument): void {
  project.chunks += 1;
  project.totalLength += terms.length;
  const { indices, values } = terms;
  for (let i = 0; i < indices.length; i++) {
    const term = indices[i]!;
    let p = project.postings.get(term);
    if (!p) {
      p = { slots: new Int32Array(2), tfs: new Uint16Array(2), n: 0, df: 0, bound: 0, boundAvgdl: 0 };
      project.postings.set(term, p);
    }
    if (p.n === p.slots.length) {
      const slots = new Int32Array(p.n * 2);
      slots.set(p.slots);
      p.slots = slots;
      const tfs = new Uint16Array(p.n * 2);
      tfs.set(p.tfs);
      p.tfs = tfs;
    }
    const tf = Math.min(values[i]!, 0xffff);
    p.slots[p.n] = slot;
    p.tfs[p.n] = tf;
    p.n += 1;
    p.df += 1;
    if (p.boundAvgdl > 0) p.bound = Math.max(p.bound, saturation(tf, terms.length, p.boundAvgdl));
  }
}

/** Takes a chunk about to be removed out of its project's statistics (its postings stay until compaction). */
export function removePostings(project: ProjectPostings, store: SlotStore, slot: number): void {
  project.chunks -= 1;
  project.totalLength -= store.lengths[slot]!;
  for (const term of store.termIds(slot)) {
    const p = project.postings.get(term);
    if (p) p.df -= 1;
  }
}

/** Postings after a compaction (`remap`: see SlotStore.compact): dead slots dropped, the others renumbered. */
export function compactPostings(project: ProjectPostings, remap: Int32Array): void {
  for (const [term, p] of project.postings) {
    let n = 0;
    for (let i = 0; i < p.n; i++) {
      const to = remap[p.slots[i]!]!;
      if (to < 0) continue;
      p.slots[n] = to;
      p.tfs[n] = p.tfs[i]!;
      n += 1;
    }
    p.n = n;
    if (n === 0) project.postings.delete(term);
  }
}

/** The BM25 rankings of one model's slots, with their per-query scratch. */
export class SparseRanker {
  /** Per-query scratch for BM25: sums indexed by slot, and the slots touched. */
  private sums = new Float64Array(0);
  private touched = new Int32Array(0);
  private readonly bySlot = (a: number, b: number) => this.store.compare(a, b);

  constructor(private readonly store: SlotStore) {}

  /** BM25 parameters of a project: N, avgdl. */
  private statistics(project: ProjectPostings): { n: number; avgdl: number } {
    return { n: project.chunks, avgdl: project.chunks > 0 ? Math.max(1, project.totalLength / project.chunks) : 1 };
  }

  /** An upper bound of a term's saturation at `avgdl`, recomputed only when avgdl outgrew it. */
  private bound(p: Postings, avgdl: number): number {
    if (p.boundAvgdl < avgdl) {
      p.boundAvgdl = avgdl * 1.1;
      let max = 0;
      for (let i = 0; i < p.n; i++) max = Math.max(max, saturation(p.tfs[i]!, this.store.lengths[p.slots[i]!]!, p.boundAvgdl));
      p.bound = max;
    }
    return p.bound;
  }

  /**
   * The query's terms found in the project, each with its BM25 weight (idf × query tf × (k1 + 1))
   * and an upper bound of its contribution to any chunk, in the order both BM25 searches sum them:
   * highest bound first (ties by query position). One order for both makes their scores equal to
   * the last bit, since a float sum depends on the order of its terms.
   */
  private sparseTerms(query: SparseVector, project: ProjectPostings, avgdl: number): QueryTerm[] {
    const { k1 } = DEFAULT_BM25_OPTIONS;
    const terms: QueryTerm[] = [];
    for (let i = 0; i < query.indices.length; i++) {
      const p = project.postings.get(query.indices[i]!);
      if (!p || p.df <= 0) continue;
      const weight = idf(project.chunks, p.df) * query.values[i]! * (k1 + 1);
      if (weight > 0) terms.push({ q: i, slots: p.slots, tfs: p.tfs, n: p.n, weight, bound: weight * this.bound(p, avgdl) });
    }
    return terms.sort((a, b) => b.bound - a.bound || a.q - b.q);
  }

  /** The per-slot sums and the list of slots they touched, sized for this model (zeroed between queries). */
  private sparseScratch(): { sums: Float64Array; touched: Int32Array } {
    if (this.sums.length < this.store.size) {
      this.sums = new Float64Array(Math.max(1024, this.store.size * 2));
      // (one more: the native walk writes one entry past the slots it lists)
      this.touched = new Int32Array(this.sums.length + 1);
    }
    return { sums: this.sums, touched: this.touched };
  }

  /**
   * BM25 top-k within the project and the findable slots (`mask`) by MaxScore, a term at a time, in the native addon
   * (@memex/vector-scan's sparseTopK): terms are taken from the highest upper bound down, each
   * adding its contributions to per-slot sums; once the bounds of the terms left sum below the k-th
   * best sum so far, their (long, low-idf) posting lists are only probed, by galloping, for the
   * chunks that can still get in. Sums follow {@link sparseTerms}'s order, so scores equal
   * {@link searchExhaustive}'s bit for bit; equal scores are ordered here, by memo and chunk.
   */
  search(query: SparseVector, project: ProjectPostings | undefined, mask: () => Uint8Array, limit: number): { score: number; item: number }[] {
    const scan = this.scan(query, project, mask, limit);
    if (!scan) return [];
    const hits = sparseTopK(scan);
    const top = new TopK<number>(limit, this.bySlot);
    for (let i = 0; i < hits.slots.length; i++) top.offer(hits.scores[i]!, hits.slots[i]!);
    return top.sorted();
  }

  /**
   * What {@link search} asks of the addon for this query (none when no term is in the
   * project): the terms in the order their contributions are summed, each slot's length, which
   * slots may be found, and the scratch. Valid until the index changes.
   */
  scan(query: SparseVector, project: ProjectPostings | undefined, mask: () => Uint8Array, limit: number): SparseScan | undefined {
    if (!project || limit <= 0) return undefined;
    const { k1, b } = DEFAULT_BM25_OPTIONS;
    const { avgdl } = this.statistics(project);
    const terms = this.sparseTerms(query, project, avgdl);
    if (terms.length === 0) return undefined;
    const { sums, touched } = this.sparseScratch();
    return { terms, lengths: this.store.lengths, mask: mask(), base: k1 * (1 - b), perLength: (k1 * b) / avgdl, k: limit, sums, touched };
  }

  /** BM25 by scoring every posting of every query term: the reference {@link search} equals. */
  searchExhaustive(query: SparseVector, project: ProjectPostings | undefined, findable: () => Uint8Array, limit: number): { score: number; item: number }[] {
    if (!project || limit <= 0) return [];
    const { k1, b } = DEFAULT_BM25_OPTIONS;
    const { avgdl } = this.statistics(project);
    const mask = findable();
    const { sums, touched } = this.sparseScratch();
    let count = 0;
    const base = k1 * (1 - b);
    const perLength = (k1 * b) / avgdl;
    for (const { slots, tfs, n, weight } of this.sparseTerms(query, project, avgdl)) {
      for (let j = 0; j < n; j++) {
        const slot = slots[j]!;
        if (mask[slot] !== 1) continue;
        const tf = tfs[j]!;
        if (sums[slot] === 0) touched[count++] = slot;
        sums[slot] = sums[slot]! + (weight * tf) / (tf + base + perLength * this.store.lengths[slot]!);
      }
    }
    const top = new TopK<number>(limit, this.bySlot);
    for (let i = 0; i < count; i++) {
      const slot = touched[i]!;
      top.offer(sums[slot]!, slot);
      sums[slot] = 0;
    }
    return top.sorted();
  }
}
