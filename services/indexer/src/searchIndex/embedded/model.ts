/**
 * One model's share of the embedded index in memory, composed of its rooms: the slots (slots.ts:
 * int8 codes with a scale per vector, lengths, term ids), the findable sets per filter
 * (findable.ts), an inverted index per project (sparse.ts), an HNSW graph per large project
 * (graph.ts) and the dense ranking over graph or scan (dense.ts).
 *
 * Ties: equal scores are ordered by memo uuid, then chunk index, everywhere.
 */
import type { EncodedDocument, SparseVector } from '@memex/text';
import type { SparseScan } from '@memex/vector-scan';
import type { ChunkCandidate } from '../port';
import { SlotCandidate } from './candidate';
import type { CatalogMemory } from './catalog';
import { DenseRanker } from './dense';
import { DEFAULT_DENSE_OPTIONS, type DenseSearchOptions } from './denseOptions';
import { FindableSets } from './findable';
import { ProjectGraphs, type AnnIndex, type GraphedProject, type SavedGraph } from './graph';
import type { ScanThread } from './scanThread';
import { SlotStore, type FullVector, type NewChunk, type StoredChunk } from './slots';
import { addPostings, compactPostings, removePostings, SparseRanker, type ProjectPostings } from './sparse';
import { SlotVectorCache } from './vectorCache';

/** One project's share of a model: its postings, its BM25 statistics and its HNSW graph. */
type ProjectData = ProjectPostings & GraphedProject;

export interface ModelMemoryOptions {
  dense?: Partial<DenseSearchOptions>;
  /**
   * `background` (default): a graph needed after loading (a project grew past `annMinChunks`, or
   * slots were compacted) is built in slices of about 10 ms (see graph.ts) between other work;
   * `inline`: at once, blocking the caller (benchmarks that time a build).
   */
  graphBuild?: 'background' | 'inline';
  /** Told when a background build finished and the project searches through its graph. */
  onGraphBuilt?: (projectId: string, chunks: number, ms: number) => void;
  /**
   * Chunks' full-precision vectors (from disk, in one read), for the final rescoring: by chunk id,
   * absent when unreadable. Without it, int8 estimates are final.
   */
  fullVectors?: (chunks: readonly StoredChunk[]) => Map<string, FullVector>;
  /**
   * Bytes of full-precision vectors kept in memory once read for rescoring, about the least recently
   * used dropped first (CLOCK, see vectorCache.ts; none by default: every one read from disk; the
   * indexer's INDEXER_VECTOR_CACHE_MB).
   * A small index ends up rescoring from memory alone; a large one keeps its most searched chunks.
   * Vectors are kept as they were read: halves (2 bytes a component) from rows stored as such.
   */
  vectorCacheBytes?: number;
  /** Where `searchDenseAsync` runs large exact scans (shared by the models of an index); none: in the caller's thread. */
  scanThread?: ScanThread;
}

/** One model's chunks: int8 vectors in one growable array, postings and statistics per project. */
export class ModelMemory {
  private readonly store: SlotStore;
  private readonly projects = new Map<string, ProjectData>();
  private readonly findable: FindableSets;
  private readonly graphs: ProjectGraphs;
  private readonly denseRanker: DenseRanker;
  private readonly sparseRanker: SparseRanker;
  private readonly dense: DenseSearchOptions;
  /** Full-precision vectors read for rescoring, by slot (see vectorCacheBytes); gone when their chunk is. */
  private readonly recentVectors: SlotVectorCache | undefined;
  /** While loading, graphs are built once at the end (in parallel) instead of chunk by chunk. */
  private deferGraphs = false;

  constructor(
    readonly dimension: number,
    initialCapacity = 1024,
    options: ModelMemoryOptions = {},
  ) {
    this.store = new SlotStore(dimension, initialCapacity);
    this.dense = { ...DEFAULT_DENSE_OPTIONS, ...options.dense };
    const cacheBytes = options.vectorCacheBytes ?? 0;
    this.recentVectors = options.fullVectors && cacheBytes > 0 ? new SlotVectorCache(cacheBytes, dimension) : undefined;
    this.findable = new FindableSets(this.store);
    this.graphs = new ProjectGraphs(this.store, this.dense, options.graphBuild ?? 'background', options.onGraphBuilt);
    this.denseRanker = new DenseRanker(this.store, this.findable, this.graphs, this.projects, this.dense, {
      fullVectors: options.fullVectors,
      recentVectors: this.recentVectors,
      scanThread: options.scanThread,
    });
    this.sparseRanker = new SparseRanker(this.store);
  }

  /** Resolves once no graph is being built in the background (tests, benchmarks, shutdown). */
  graphsBuilt(): Promise<void> {
    return this.graphs.built();
  }

  /** Stops background builds (each ends at its next slice): this memory is being replaced or closed. */
  dispose(): void {
    this.graphs.dispose();
    this.denseRanker.dispose();
    this.recentVectors?.clear();
  }

  get live(): number {
    return this.store.live;
  }

  get denseOptions(): Readonly<DenseSearchOptions> {
    return this.dense;
  }

  /** Vectors asked of `fullVectors` for rescoring so far (those the cache did not hold; benchmarks). */
  get vectorsRead(): number {
    return this.denseRanker.vectorsRead;
  }

  /** Whether `projectId` currently searches its dense vectors through an HNSW graph (not one being built). */
  hasGraph(projectId: string): boolean {
    return this.projects.get(projectId)?.ann !== undefined;
  }

  /** Adds chunks without updating graphs until {@link endBulkLoad} builds them in one pass. */
  beginBulkLoad(): void {
    this.deferGraphs = true;
  }

  /**
   * Ends a bulk load: each project large enough gets its graph, the saved one when it still fits
   * (see ProjectGraphs.adopt), else a new one. Says which projects took which, and how long it took.
   */
  endBulkLoad(saved: (projectId: string) => SavedGraph | undefined = () => undefined): { projectId: string; adopted: boolean; chunks: number; ms: number }[] {
    this.deferGraphs = false;
    const outcomes: { projectId: string; adopted: boolean; chunks: number; ms: number }[] = [];
    for (const [projectId, project] of this.projects) {
      if (project.ann || project.chunks < this.dense.annMinChunks) continue;
      const started = performance.now();
      const graph = saved(projectId);
      const adopted = graph !== undefined && this.graphs.adopt(projectId, project, graph);
      if (!adopted) this.graphs.build(projectId, project);
      outcomes.push({ projectId, adopted, chunks: project.chunks, ms: Math.round(performance.now() - started) });
    }
    return outcomes;
  }

  /** Projects whose graph changed since it was built, adopted or last marked saved. */
  unsavedGraphs(): string[] {
    return [...this.projects].filter(([, p]) => p.ann?.changed).map(([projectId]) => projectId);
  }

  /** A project's graph and the chunk under each of its keys (null once removed), for saving. */
  graphSnapshot(projectId: string): { index: AnnIndex; chunkIds: (string | null)[]; count: number } | undefined {
    return this.graphs.snapshot(this.projects.get(projectId)?.ann);
  }

  graphSaved(projectId: string): void {
    const graph = this.projects.get(projectId)?.ann;
    if (graph) graph.changed = false;
  }

  private project(projectId: string): ProjectData {
    let project = this.projects.get(projectId);
    if (!project) {
      project = { postings: new Map(), chunks: 0, totalLength: 0, ann: undefined, building: undefined };
      this.projects.set(projectId, project);
    }
    return project;
  }

  /** Adds a chunk with its vector and its term frequencies (`termFrequencies` of its text). */
  add(chunk: NewChunk, dense: Float32Array, terms: EncodedDocument): void {
    if (dense.length !== this.dimension) {
      throw new Error(`vector of dimension ${dense.length} for a model of dimension ${this.dimension}`);
    }
    const slot = this.store.add(chunk, dense, terms);
    const project = this.project(chunk.projectId);
    addPostings(project, slot, terms);
    this.findable.logChange(slot);
    if (!this.deferGraphs) {
      if (project.ann) this.graphs.add(project.ann, [slot]);
      else if (project.building) project.building.queue.push(slot);
      else if (project.chunks >= this.dense.annMinChunks) this.graphs.request(chunk.projectId, project);
    }
  }

  /** Removes a memo's chunks, or those with `from <= index < to` (a range another process rewrote). */
  removeMemo(memoId: string, from = 0, to = Infinity): void {
    const list = this.store.byMemo.get(memoId);
    if (!list) return;
    const kept: number[] = [];
    for (const slot of list) {
      const chunk = this.store.chunks[slot];
      if (!chunk) continue;
      if (chunk.index < from || chunk.index >= to) {
        kept.push(slot);
        continue;
      }
      this.recentVectors?.delete(slot);
      const project = this.projects.get(chunk.projectId)!;
      removePostings(project, this.store, slot);
      this.graphs.remove(project, slot);
      this.store.remove(slot);
      this.findable.logChange(slot);
    }
    if (kept.length > 0) this.store.byMemo.set(memoId, kept);
    else this.store.byMemo.delete(memoId);
    if (this.store.wasteful) this.compact();
  }

  /** Drops dead slots: live ones move down; postings, memo lists and graphs follow them. */
  private compact(): void {
    const remap = this.store.compact();
    for (const project of this.projects.values()) compactPostings(project, remap);
    this.recentVectors?.remap(remap);
    this.findable.renumbered();
    for (const [projectId, project] of this.projects) {
      if (project.chunks === 0 && project.postings.size === 0) {
        if (project.building) project.building.cancelled = true;
        this.projects.delete(projectId);
      } else if (project.ann || project.building) this.graphs.request(projectId, project);
    }
  }

  /** Findable chunks: those of eligible memos at the eligible revision. */
  count(eligible: Map<string, number>): number {
    return this.findable.count(eligible);
  }

  /**
   * Dense top-k in three stages: candidates (the graph's int8 × int8 neighbours, or every findable
   * slot), the best `limit + rescoreMargin` of them by the full-precision query against their int8
   * vectors, and the best `exactTop + rescoreMargin` of those rescored with their full-precision
   * vectors (those kept in memory, the others from disk through `fullVectors` in one read); the
   * others keep their int8 estimates.
   */
  searchDense(query: Float32Array, eligible: Map<string, number>, limit: number, catalog: CatalogMemory, projectId?: string, exactTop = limit): ChunkCandidate[] {
    return this.denseRanker.search(query, eligible, limit, catalog, projectId, exactTop);
  }

  /** `searchDense`, with its exact scan on the scan thread when that pays (see DenseRanker.searchAsync). */
  searchDenseAsync(query: Float32Array, eligible: Map<string, number>, limit: number, catalog: CatalogMemory, projectId?: string, exactTop = limit): Promise<ChunkCandidate[]> {
    return this.denseRanker.searchAsync(query, eligible, limit, catalog, projectId, exactTop);
  }

  /** BM25 top-k within the project and filters, by MaxScore in the native addon (see SparseRanker.search). */
  searchSparse(query: SparseVector, projectId: string, eligible: Map<string, number>, limit: number, catalog: CatalogMemory): ChunkCandidate[] {
    const hits = this.sparseRanker.search(query, this.projects.get(projectId), () => this.findable.of(eligible).mask, limit);
    return hits.map(({ score, item }) => this.candidate(item, score, catalog));
  }

  /** What {@link searchSparse} asks of the addon for this query (see SparseRanker.scan), for benchmarks that pair two builds of it. */
  sparseScan(query: SparseVector, projectId: string, eligible: Map<string, number>, limit: number): SparseScan | undefined {
    return this.sparseRanker.scan(query, this.projects.get(projectId), () => this.findable.of(eligible).mask, limit);
  }

  /** BM25 by scoring every posting of every query term: the reference {@link searchSparse} equals. */
  searchSparseExhaustive(query: SparseVector, projectId: string, eligible: Map<string, number>, limit: number, catalog: CatalogMemory): ChunkCandidate[] {
    const hits = this.sparseRanker.searchExhaustive(query, this.projects.get(projectId), () => this.findable.of(eligible).mask, limit);
    return hits.map(({ score, item }) => this.candidate(item, score, catalog));
  }

  private candidate(slot: number, score: number, catalog: CatalogMemory): ChunkCandidate {
    return new SlotCandidate(this.store.chunks[slot]!, score, catalog);
  }
}
