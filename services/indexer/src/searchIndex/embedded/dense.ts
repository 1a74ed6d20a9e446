/**
 * Dense ranking of one model's chunks: candidates from the project's HNSW graph (when the project
 * is large and the filters keep most of it) or from an exact scan of the int8 vectors (the native
 * SIMD scan of @memex/vector-scan, on the scan thread when there is one, or a JS loop when few);
 * the best of them by the full-precision query against int8 are rescored with their full-precision
 * vectors (read from disk through `fullVectors`, the most recently read kept in a cache), so
 * scores are exact cosines.
 */
import { estimateRows, exactProducts, scanTopK } from '@memex/vector-scan';
import type { ChunkCandidate } from '../port';
import { TopK } from '../topK';
import { SlotCandidate } from './candidate';
import type { CatalogMemory } from './catalog';
import type { DenseSearchOptions } from './denseOptions';
import type { FindableSets } from './findable';
import type { GraphedProject, ProjectGraphs } from './graph';
import { codesShareNorm, MAX_SHRUNK_SHARE, quantize } from './quantize';
import type { ExactScan, ScanThread } from './scanThread';
import type { FullVector, SlotStore, StoredChunk } from './slots';
import type { SlotVectorCache } from './vectorCache';

/** Candidates the SIMD scan passes on at least (before the float query's estimates pick the best). */
const SIMD_SCAN_MIN_CANDIDATES = 256;

/**
 * From this many slots scanned (the findable ones) a model's exact scan goes to the scan thread when
 * there is one (see searchAsync): below, the scan (~6 ns a slot) costs little more than the
 * message round trip (~50-100 µs, and ~0.3 ms to wake an idle thread), and a small index never
 * starts the thread.
 */
export const SCAN_THREAD_MIN_SLOTS = 32_768;

/** What a dense search looks at: its findable slots (as a list and a mask), how many it ranks, where candidates come from. */
interface DensePlan {
  slots: Uint32Array;
  mask: Uint8Array;
  depth: number;
  graph?: number[];
  scan?: ExactScan;
}

/** The scan in this thread. */
function scanHere(codes: Int8Array, scan: ExactScan): Uint32Array {
  return scanTopK({ codes, ...scan });
}

/** What a dense ranking reads besides the slots: see ModelMemoryOptions. */
interface DenseSources {
  fullVectors: ((chunks: readonly StoredChunk[]) => Map<string, FullVector>) | undefined;
  recentVectors: SlotVectorCache | undefined;
  scanThread: ScanThread | undefined;
}

/** The dense rankings of one model's slots. */
export class DenseRanker {
  /** Vectors asked of `fullVectors` for rescoring so far (those the cache did not hold; benchmarks). */
  vectorsRead = 0;
  private disposed = false;
  private readonly fullVectors: DenseSources['fullVectors'];
  private readonly recentVectors: SlotVectorCache | undefined;
  private readonly scanThread: ScanThread | undefined;
  private readonly bySlot = (a: number, b: number) => this.store.compare(a, b);

  constructor(
    private readonly store: SlotStore,
    private readonly findable: FindableSets,
    private readonly graphs: ProjectGraphs,
    private readonly projects: ReadonlyMap<string, GraphedProject>,
    private readonly dense: DenseSearchOptions,
    sources: DenseSources,
  ) {
    this.fullVectors = sources.fullVectors;
    this.recentVectors = sources.recentVectors;
    this.scanThread = sources.scanThread;
  }

  /** Searches under way on the scan thread come back empty: the model is being replaced or closed. */
  dispose(): void {
    this.disposed = true;
  }

  /**
   * Dense top-k in three stages: candidates (the graph's int8 × int8 neighbours, or every findable
   * slot), the best `limit + rescoreMargin` of them by the full-precision query against their int8
   * vectors, and the best `exactTop + rescoreMargin` of those rescored with their full-precision
   * vectors (those kept in memory, the others from disk through `fullVectors` in one read: ~15 µs a
   * chunk); the others keep their int8 estimates.
   */
  search(query: Float32Array, eligible: Map<string, number>, limit: number, catalog: CatalogMemory, projectId?: string, exactTop = limit): ChunkCandidate[] {
    const plan = this.plan(query, eligible, limit, projectId);
    return plan ? this.rank(query, plan, this.candidatesHere(plan), limit, exactTop, catalog) : [];
  }

  /**
   * `search`, with its exact scan on the scan thread when there is one, engaged (its gate open:
   * see SpareCpuGate), and the model has at least {@link SCAN_THREAD_MIN_SLOTS} slots: the caller's
   * thread is free meanwhile (a hybrid search runs BM25 then). The slots found are those of the model
   * as it was when the search began: chunks added meanwhile are not findable (as for a search that
   * began before them), chunks removed meanwhile are skipped, and a compaction meanwhile (slots
   * renumbered) has the search run again here.
   */
  async searchAsync(
    query: Float32Array,
    eligible: Map<string, number>,
    limit: number,
    catalog: CatalogMemory,
    projectId?: string,
    exactTop = limit,
  ): Promise<ChunkCandidate[]> {
    const thread = this.scanThread;
    const plan = this.plan(query, eligible, limit, projectId);
    if (!plan) return [];
    // (a scan of few slots, a filtered one say, costs less here than the hop to the thread and back)
    const scanned = plan.scan ? (plan.scan.slots?.length ?? plan.scan.total) : 0;
    if (!plan.scan || !thread?.engaged || scanned < SCAN_THREAD_MIN_SLOTS) return this.rank(query, plan, this.candidatesHere(plan), limit, exactTop, catalog);
    const layout = this.store.layout;
    let keys: Uint32Array | undefined;
    try {
      keys = await thread.scan({ ...plan.scan, codes: this.store.codes });
    } catch {
      // (scanned here instead, below)
    }
    if (this.disposed) return [];
    // (renumbered slots make the plan's slots and mask stale: plan again)
    if (layout !== this.store.layout) return this.search(query, eligible, limit, catalog, projectId, exactTop);
    return this.rank(query, plan, keys ? this.scanFound(keys, plan.scan, plan.mask) : this.candidatesHere(plan), limit, exactTop, catalog);
  }

  /** What a dense search looks at: the findable slots, and the graph's candidates or a scan to make. */
  private plan(query: Float32Array, eligible: Map<string, number>, limit: number, projectId: string | undefined): DensePlan | undefined {
    if (limit <= 0) return undefined;
    const { slots, mask } = this.findable.of(eligible);
    if (slots.length === 0) return undefined;
    const depth = limit + this.dense.rescoreMargin;
    const project = projectId === undefined ? undefined : this.projects.get(projectId);
    if (project?.ann && slots.length >= this.dense.annMinShare * project.chunks) {
      const share = slots.length / Math.max(1, project.chunks);
      const graph = this.graphs.candidates(project.ann, query, mask, Math.max(this.dense.graphCandidates, 2 * depth), share);
      if (graph) return { slots, mask, depth, graph };
    }
    const scan = this.scanPlan(query, slots, depth);
    return scan ? { slots, mask, depth, scan } : { slots, mask, depth };
  }

  /** A plan's candidates found in this thread: the graph's, the scan's, or (undefined) every findable slot. */
  private candidatesHere(plan: DensePlan): ArrayLike<number> | undefined {
    return plan.graph ?? (plan.scan && this.scanFound(scanHere(this.store.codes, plan.scan), plan.scan, plan.mask));
  }

  /**
   * The dense top-k from candidate slots (every findable one when there are none): the best `depth`
   * by the full-precision query against their int8 vectors, then the best `exactTop + rescoreMargin`
   * of those rescored with their full-precision vectors. Slots removed since the candidates were
   * found are skipped.
   */
  private rank(query: Float32Array, plan: DensePlan, candidates: ArrayLike<number> | undefined, limit: number, exactTop: number, catalog: CatalogMemory): ChunkCandidate[] {
    const source: ArrayLike<number> = candidates ?? plan.slots;
    const live = new Uint32Array(source.length);
    let n = 0;
    for (let i = 0; i < source.length; i++) {
      const slot = source[i]!;
      if (this.store.chunks[slot] !== undefined) live[n++] = slot;
    }
    // (the cosine of the full-precision query with each one's int8 vector, natively: several times a JS loop's speed)
    const slots = live.subarray(0, n);
    const estimates = estimateRows({ codes: this.store.codes, dimension: this.store.dimension, scales: this.store.scales, query, slots, out: new Float64Array(n) });
    const approximate = new TopK<number>(this.fullVectors ? plan.depth : limit, this.bySlot);
    for (let i = 0; i < n; i++) {
      const score = estimates[i]!;
      if (score >= approximate.threshold) approximate.offer(score, slots[i]!);
    }
    if (!this.fullVectors) return approximate.sorted().map(({ score, item }) => this.candidate(item, score, catalog));
    // The best `exactTop + rescoreMargin` estimates are rescored with their full-precision vectors,
    // the others keep their estimates; then all are ranked once. Which estimates are the best is a
    // set: chosen by a second top-k over the first's entries, not by sorting them all.
    const { scores, items } = approximate.unordered();
    const rescore = new TopK<number>(Math.max(0, exactTop) + this.dense.rescoreMargin, (a, b) => this.bySlot(items[a]!, items[b]!));
    for (let i = 0; i < scores.length; i++) rescore.offer(scores[i]!, i);
    const chosen = rescore.unordered().items;
    const final = Float64Array.from(scores);
    // (natively: F16C converts a vector's halves eight at a time, where JS looked each up in a 256 KiB table that misses the cache under load)
    const exact = exactProducts(this.rescoringVectors(chosen.map((i) => items[i]!)), query);
    for (let j = 0; j < chosen.length; j++) {
      // (a vector not read, or of another length, keeps its estimate)
      if (!Number.isNaN(exact[j]!)) final[chosen[j]!] = exact[j]!;
    }
    const top = new TopK<number>(limit, this.bySlot);
    for (let i = 0; i < items.length; i++) top.offer(final[i]!, items[i]!);
    return top.sorted().map(({ score, item }) => this.candidate(item, score, catalog));
  }

  /** The full-precision vectors of these slots (undefined where unreadable): those kept in memory, the others read (and kept). */
  private rescoringVectors(slots: readonly number[]): (FullVector | undefined)[] {
    const cache = this.recentVectors;
    const vectors = new Array<FullVector | undefined>(slots.length);
    const missing: StoredChunk[] = [];
    const missingAt: number[] = [];
    for (let i = 0; i < slots.length; i++) {
      const v = cache?.get(slots[i]!);
      if (v) vectors[i] = v;
      else {
        missing.push(this.store.chunks[slots[i]!]!);
        missingAt.push(i);
      }
    }
    if (missing.length > 0) {
      this.vectorsRead += missing.length;
      const read = this.fullVectors!(missing);
      missing.forEach((chunk, j) => {
        const v = read.get(chunk.chunkId);
        vectors[missingAt[j]!] = v;
        if (v) cache?.set(slots[missingAt[j]!]!, v);
      });
    }
    return vectors;
  }

  /**
   * An exact SIMD scan for the findable slots nearest the query: the native scan of
   * @memex/vector-scan over the findable slots' int8 vectors (the query quantized too), at a cost in
   * proportion to them, about ten times a JS loop's speed. Where the stored codes share one norm (see
   * quantizeStored) it ranks by their inner product, in the cosine's order for a third of its work
   * (see scanFound for the few slots whose codes were shrunk); where many were shrunk (a model with
   * outsized components), by the cosine itself. Undefined when there are few findable slots: the JS
   * loop over them costs as little.
   */
  private scanPlan(query: Float32Array, slots: Uint32Array, depth: number): ExactScan | undefined {
    const total = this.store.size;
    if (slots.length < this.dense.simdScanMinChunks) return undefined;
    const codes = new Int8Array(this.store.dimension);
    quantize(query, codes, 0);
    // The int8 × int8 order differs a little from the float query's estimates: take twice the depth,
    // which holds recall@10 (docs/benchmarks.md).
    const k = Math.min(slots.length, Math.max(2 * depth, SIMD_SCAN_MIN_CANDIDATES));
    const byProduct = codesShareNorm(this.store.dimension) && this.store.shrunk.size <= total * MAX_SHRUNK_SHARE;
    // (the list only where some slots are not findable: without one the scan reads every slot)
    // (unordered: rankDense ranks them again by the float query, in an order of its own)
    return { dimension: this.store.dimension, total, query: codes, k, cosine: !byProduct, unordered: true, ...(slots.length < total ? { slots } : {}) };
  }

  /**
   * A scan's slots (all findable: it scanned only those), with (when it ranked by inner product)
   * every findable slot whose codes were shrunk, which that order would put a little low.
   */
  private scanFound(keys: Uint32Array, scan: ExactScan, mask: Uint8Array): ArrayLike<number> {
    if (scan.cosine || this.store.shrunk.size === 0) return keys;
    const found = Array.from(keys);
    const taken = new Set(found);
    for (const slot of this.store.shrunk) if (mask[slot] === 1 && !taken.has(slot)) found.push(slot);
    return found;
  }

  private candidate(slot: number, score: number, catalog: CatalogMemory): ChunkCandidate {
    return new SlotCandidate(this.store.chunks[slot]!, score, catalog);
  }
}
