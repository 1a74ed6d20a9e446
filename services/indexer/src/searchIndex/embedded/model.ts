/**
 * The in-memory side of the embedded index: the catalog and, per model, compact dense vectors (int8
 * with a scale per vector), an HNSW graph per large project, and an inverted index per project.
 *
 * - Dense: candidates come from the project's HNSW graph (usearch, int8) when the project is large
 *   and the filters keep most of it, else from an exact scan of the int8 vectors (the native SIMD
 *   scan of @memex/vector-scan over the findable ones, or a JS loop over them when few); the best
 *   of them by the full-precision query against int8 are rescored with their full-precision vectors,
 *   read from disk (SQLite) through `fullVectors` for just those few (the most recently read kept in
 *   memory up to a byte budget), so scores are exact cosines.
 * - Sparse: BM25 with every statistic (document count, document frequency, average length) taken
 *   from the caller's project alone, top-k by MaxScore in the native addon (terms whose summed upper
 *   bounds cannot reach the current k-th score are only probed, never walked), equal to scoring
 *   every posting.
 * - Ties: equal scores are ordered by memo uuid, then chunk index, everywhere.
 */
import usearch from 'usearch';
import { estimateRows, exactProducts, scanTopK, sparseTopK, type SparseScan, type SparseTerm } from '@memex/vector-scan';
import { matchesFilters, type Filter, type FilterableMemo, type MemoAttributes } from '@memex/contracts';
import { DEFAULT_BM25_OPTIONS, idf, type EncodedDocument, type SparseVector } from '@memex/text';
import type { CatalogEntry, ChunkCandidate } from '../port';
import type { ExactScan, ScanThread } from './scanThread';
import { SlotVectorCache } from './vectorCache';
import { TopK } from '../topK';

const { Index, MetricKind, ScalarKind } = usearch;
export type AnnIndex = InstanceType<typeof Index>;

/** An empty HNSW graph as the index builds them (int8 vectors, cosine), to build or to load into. */
export function newAnnIndex(dimension: number, dense: Pick<DenseSearchOptions, 'connectivity' | 'expansionAdd' | 'expansionSearch'>): AnnIndex {
  return new Index({
    dimensions: dimension,
    metric: MetricKind.Cos,
    quantization: ScalarKind.I8,
    connectivity: dense.connectivity,
    expansion_add: dense.expansionAdd,
    expansion_search: dense.expansionSearch,
    multi: false,
  });
}

/**
 * A project's HNSW graph. Its keys are labels of its own, not slots, so that a graph saved to disk
 * still fits after a restart numbers the slots differently: `slots[key]` is the key's slot, -1 once
 * the chunk is gone.
 */
interface Graph {
  index: AnnIndex;
  slots: Int32Array;
  /** Keys handed out so far (the next key). */
  keys: number;
  /** Changed since it was built, adopted or saved. */
  changed: boolean;
}

/** A graph read back from disk, with the chunk each of its keys stood for when it was saved. */
export interface SavedGraph {
  index: AnnIndex;
  /** By key; null for keys already removed when it was saved. */
  chunkIds: readonly (string | null)[];
  /** Memos changed since it was saved: their entries are dropped and their current chunks added. */
  changedMemos: ReadonlySet<string>;
}

export interface StoredChunk {
  chunkId: string;
  memoId: string;
  projectId: string;
  revision: number;
  index: number;
  content: string;
  /**
   * Where the chunk's row is in its store (the embedded index's SQLite rowid), if it has one, so that
   * `fullVectors` reads its vector there instead of looking its id up: -1 when it has none.
   */
  row: number;
}

/** A chunk as added: its row where it has one (see {@link StoredChunk.row}). */
export type NewChunk = Omit<StoredChunk, 'row'> & { row?: number };

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

/**
 * A graph being built a slice at a time between other work (searches, writes), so that no request
 * waits for a whole build; the project's searches scan until it is done. `queue` holds the slots to
 * add in order: the live ones when it started, then those added since.
 */
interface GraphBuild {
  graph: Graph;
  queue: number[];
  next: number;
  cancelled: boolean;
}

/** One project's share of a model: its postings, its BM25 statistics and its HNSW graph. */
interface ProjectData {
  postings: Map<number, Postings>;
  /** Live chunks and the sum of their lengths in terms (BM25's N and avgdl, per project). */
  chunks: number;
  totalLength: number;
  ann: Graph | undefined;
  building: GraphBuild | undefined;
}

export interface DenseSearchOptions {
  /** A project gets an HNSW graph once it holds this many chunks; below, dense search scans. */
  annMinChunks: number;
  /** The graph is used when the filters keep at least this share of the project's chunks. */
  annMinShare: number;
  /** HNSW connectivity (M), and candidate list sizes while adding and searching. */
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  /** At least this many graph neighbours are taken (twice the rescoring depth when that is more). */
  graphCandidates: number;
  /** Candidates beyond `limit` rescored with full-precision vectors. */
  rescoreMargin: number;
  /** Without a graph, from this many findable chunks the dense scan is the native SIMD one, not a JS loop. */
  simdScanMinChunks: number;
}

export const DEFAULT_DENSE_OPTIONS: Readonly<DenseSearchOptions> = Object.freeze({
  // Below this, an exact SIMD scan of the int8 vectors beats the graph at the search breadth that
  // holds recall@10 ≥ 0.99 (bench/search.bench.ts, 100k chunks: scan 1.75 ms, graph 2.3 ms; a scan
  // grows with the chunks, the graph barely), and it spares the graph's memory and build.
  annMinChunks: 131_072,
  annMinShare: 0.25,
  // The offline model's sentence vectors (averaged GloVe) are a hard case for HNSW, as GloVe is in
  // ann-benchmarks. Measured with bench/search.bench.ts at 100k chunks, recall@10 against an exact
  // float scan (the scan path itself: 1.0000): M 16, search 400, 308 neighbours 0.9726; M 32 0.9799;
  // M 16, search 800, 615 neighbours 0.9893; M 24, add 300, search 600 0.9899; M 32, search 800,
  // 615 neighbours 0.9925, at about twice the dense ranking's time of the first and +220 bytes/chunk.
  connectivity: 32,
  expansionAdd: 200,
  expansionSearch: 800,
  graphCandidates: 512,
  rescoreMargin: 16,
  simdScanMinChunks: 512,
});

/**
 * A chunk's vector for rescoring: float32, or IEEE halves as stored at rest (the addon's
 * exactProducts reads both), kept as such so that a cache of them holds twice as many.
 */
export type FullVector = Float32Array | Uint16Array;

export interface ModelMemoryOptions {
  dense?: Partial<DenseSearchOptions>;
  /**
   * `background` (default): a graph needed after loading (a project grew past `annMinChunks`, or
   * slots were compacted) is built in slices of about {@link GRAPH_SLICE_MS} between other work;
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

function filterable(memo: MemoAttributes): FilterableMemo {
  return {
    title: memo.title,
    source: memo.source,
    clientReferenceId: memo.clientReferenceId,
    tags: memo.tags,
    metadata: memo.metadata,
  };
}

/**
 * The memos a (project, filters) pair allows: memo id → the revision their findable chunks must
 * have. The catalog keeps the ones it has handed out current as memos change, and lists the memos
 * changed since, in order, so a model memory's findable slots catch up with just those.
 */
export class EligibleMemos extends Map<string, number> {
  readonly changed: string[] = [];
}

/**
 * Changes an eligible set records before the catalog drops it and the next search builds a new one
 * (~2 ms at 10k memos); bounds what the lists hold: up to 512 sets of 1,024 ids.
 */
const MAX_ELIGIBLE_CHANGES = 1024;

/** Whether a (project, filters) pair allows a catalog entry: live, not archived, passing every filter. */
function allows(entry: CatalogEntry | undefined, filters: readonly Filter[]): entry is CatalogEntry & { memo: MemoAttributes } {
  const memo = entry?.memo;
  if (!memo || memo.archived) return false;
  return filters.length === 0 || matchesFilters(filterable(memo), filters);
}

/** Memos the catalog knows, by id and by project, and the eligible sets handed out, kept current. */
export class CatalogMemory {
  readonly entries = new Map<string, CatalogEntry>();
  private readonly byProject = new Map<string, Set<string>>();
  /** The eligible sets handed out, by project and filters. */
  private readonly eligibleCache = new Map<string, { projectId: string; filters: readonly Filter[]; memos: EligibleMemos }>();

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
    for (const [key, cached] of this.eligibleCache) {
      if (cached.projectId !== entry.projectId && cached.projectId !== previous?.projectId) continue;
      const memos = cached.memos;
      if (memos.changed.length >= MAX_ELIGIBLE_CHANGES) {
        this.eligibleCache.delete(key);
        continue;
      }
      if (cached.projectId === entry.projectId && allows(entry, cached.filters)) memos.set(entry.memoId, entry.memo.revision);
      else memos.delete(entry.memoId);
      memos.changed.push(entry.memoId);
    }
  }

  clear(): void {
    this.entries.clear();
    this.byProject.clear();
    this.eligibleCache.clear();
  }

  /**
   * The memos of the project that are live, not archived and pass every filter, each with the
   * revision its findable chunks must have. One set per (project, filters), built once and then kept
   * current by {@link set} (building one walks every memo of the project: ~2 ms at 10k memos).
   */
  eligible(projectId: string, filters: readonly Filter[]): EligibleMemos {
    const key = `${projectId}\u0000${JSON.stringify(filters)}`;
    const cached = this.eligibleCache.get(key);
    if (cached) return cached.memos;
    const memos = new EligibleMemos();
    for (const memoId of this.byProject.get(projectId) ?? []) {
      const entry = this.entries.get(memoId);
      if (allows(entry, filters)) memos.set(memoId, entry.memo.revision);
    }
    if (this.eligibleCache.size >= 512) this.eligibleCache.delete(this.eligibleCache.keys().next().value!);
    this.eligibleCache.set(key, { projectId, filters: structuredClone(filters), memos });
    return memos;
  }
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

/** int8 codes of `v` spanning the whole range (its largest component at ±127): v ≈ codes × scale. */
export function quantize(v: Float32Array, out: Int8Array, offset: number): number {
  let max = 0;
  for (let d = 0; d < v.length; d++) max = Math.max(max, Math.abs(v[d]!));
  const scale = max > 0 ? max / 127 : 1;
  for (let d = 0; d < v.length; d++) out[offset + d] = Math.round(v[d]! / scale);
  return scale;
}

/**
 * A stored vector's int8 codes, at one norm for every vector of the dimension: `CODE_SPREAD` × √dim,
 * so a typical component (1/√dim of a unit vector) codes as ±CODE_SPREAD, and one up to
 * 127/CODE_SPREAD times larger still fits. Equal norms let the SIMD scan rank by the codes' inner
 * product, a third of the cosine's work (no norms), in the cosine's order. A vector with a larger
 * component is scaled to fit: a smaller norm, so `shrunk`, which the scan makes up for (see
 * {@link ModelMemory.scanCandidates}). Below 16 dimensions that norm would be under 127: the codes
 * span the range as {@link quantize}'s. v ≈ codes × scale.
 */
export function quantizeStored(v: Float32Array, out: Int8Array, offset: number): { scale: number; shrunk: boolean } {
  if (!codesShareNorm(v.length)) return { scale: quantize(v, out, offset), shrunk: false };
  const norm = CODE_SPREAD * Math.sqrt(v.length);
  let max = 0;
  let squares = 0;
  for (let d = 0; d < v.length; d++) {
    max = Math.max(max, Math.abs(v[d]!));
    squares += v[d]! * v[d]!;
  }
  if (max === 0) return { scale: quantize(v, out, offset), shrunk: false };
  const step = Math.sqrt(squares) / norm;
  const shrunk = max / 127 > step;
  const scale = shrunk ? max / 127 : step;
  for (let d = 0; d < v.length; d++) out[offset + d] = Math.round(v[d]! / scale);
  return { scale, shrunk };
}

/** A typical component's code (see quantizeStored): about the precision of spanning ±127 by the largest. */
const CODE_SPREAD = 32;

/** Above this share of shrunk codes (see quantizeStored), scans rank by cosine, not by inner product plus the shrunk. */
const MAX_SHRUNK_SHARE = 1 / 64;

/** Whether stored codes of this dimension share one norm (see quantizeStored), so scans rank by inner product. */
function codesShareNorm(dimension: number): boolean {
  return CODE_SPREAD * Math.sqrt(dimension) >= 127;
}

/** A uuid's first 12 hex digits (`xxxxxxxx-xxxx-`), lower case. */
const UUID_HEAD = /^[0-9a-f]{8}-[0-9a-f]{4}-/;

/**
 * A memo id's place in the order of ids as strings, as a number: the first 48 bits of a uuid in its
 * canonical lower-case form (the memo service's v7 and v5 ids), whose order as numbers is their
 * order as strings; -1 for any other id. Two ids with different keys, neither -1, are ordered by
 * their keys; any others by the strings (equal keys: the same memo, or uuids sharing 48 bits).
 */
export function memoOrderKey(memoId: string): number {
  if (!UUID_HEAD.test(memoId)) return -1;
  return Number.parseInt(memoId.slice(0, 8), 16) * 0x10000 + Number.parseInt(memoId.slice(9, 13), 16);
}

/** Candidates the SIMD scan passes on at least (before the float query's estimates pick the best). */
const SIMD_SCAN_MIN_CANDIDATES = 256;

/**
 * From this many slots scanned (the findable ones) a model's exact scan goes to the scan thread when
 * there is one (see searchDenseAsync): below, the scan (~6 ns a slot) costs little more than the
 * message round trip (~50-100 µs, and ~0.3 ms to wake an idle thread), and a small index never
 * starts the thread.
 */
export const SCAN_THREAD_MIN_SLOTS = 32_768;

/** Slot changes the model keeps for cached findable sets to catch up with (see ModelMemory.changeLog). */
const MAX_SLOT_CHANGES = 65_536;

/**
 * The findable slots for one eligible set, as of `layout`, the change log up to `logged` and the
 * first `memosSeen` of its changed memos: a mask by slot (grown as slots are added; a slot beyond it
 * is not findable) and the ascending list.
 */
interface FindableSlots {
  layout: number;
  logged: number;
  memosSeen: number;
  mask: Uint8Array;
  count: number;
  slots: Uint32Array;
}

/** The slots whose mask byte is 1, ascending (`count` of them). */
function maskedSlots(mask: Uint8Array, count: number): Uint32Array {
  const slots = new Uint32Array(count);
  for (let slot = 0, i = 0; i < count; slot++) if (mask[slot] === 1) slots[i++] = slot;
  return slots;
}

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

/** Nodes a graph takes one at a time before parallel insertion starts. */
const GRAPH_SEED = 1024;
/** A background build adds nodes for about this long before it lets other work run. */
const GRAPH_SLICE_MS = 10;
/** Nodes per usearch call during a background build (a call cannot be interrupted). */
const GRAPH_SLICE_NODES = 64;

/**
 * Int8 codes for `length` bytes on a SharedArrayBuffer: the scan thread reads them where they are
 * (see scanThread.ts), never a copy.
 */
function sharedCodes(length: number): Int8Array {
  return new Int8Array(new SharedArrayBuffer(length));
}

/** One model's chunks: int8 vectors in one growable array, postings and statistics per project. */
export class ModelMemory {
  /** Slots' int8 codes, written once each; grown or compacted into a new buffer, never rewritten in place. */
  private codes: Int8Array;
  /** Each slot's int8 scale and its length in terms (BM25's dl), beside the codes for tight loops. */
  private scales: Float32Array;
  /** Slots whose codes had to take a smaller norm than the others' (see quantizeStored); dead ones go at compaction. */
  private shrunk = new Set<number>();
  private lengths: Float32Array;
  /** Each slot's key in its project's graph, -1 when it has none. */
  private graphKeys: Int32Array;
  /**
   * Each slot's distinct term ids (their frequencies live in the postings), for removal: a run of
   * `termCounts[slot]` ids from `termStarts[slot]` in one shared pool, not an array per chunk (a
   * typed array costs ~100 bytes before its first element). Dead slots' runs stay until compaction.
   */
  private termPool = new Uint32Array(4096);
  private termUsed = 0;
  private termStarts: Int32Array;
  private termCounts: Int32Array;
  /**
   * Each slot's memo id as a number in the same order as the ids (see {@link memoOrderKey}), so the
   * tie-break of equal scores (memo, then chunk: every ranking's top k makes many on a corpus with
   * repeated passages) compares two numbers, not two chunks' id strings.
   */
  private memoOrder: Float64Array;
  /** Per-query scratch for BM25: sums indexed by slot, and the slots touched. */
  private sums = new Float64Array(0);
  private touched = new Int32Array(0);
  private readonly slots: (StoredChunk | undefined)[] = [];
  private readonly byMemo = new Map<string, number[]>();
  private readonly projects = new Map<string, ProjectData>();
  private liveCount = 0;
  private deadCount = 0;
  /**
   * Slots added or removed, in order, since `changeLogStart` changes (absolute positions), so cached
   * findable sets catch up with just those; cleared by a compaction (which renumbers every slot) and
   * when it grows past {@link MAX_SLOT_CHANGES} (sets further behind are built again).
   */
  private changeLog: number[] = [];
  private changeLogStart = 0;
  private readonly slotSets = new WeakMap<Map<string, number>, FindableSlots>();
  private readonly dense: DenseSearchOptions;
  private readonly fullVectors: ModelMemoryOptions['fullVectors'];
  /** Full-precision vectors read for rescoring, by slot (see vectorCacheBytes); gone when their chunk is. */
  private readonly recentVectors: SlotVectorCache | undefined;
  /** While loading, graphs are built once at the end (in parallel) instead of chunk by chunk. */
  private deferGraphs = false;
  private readonly graphBuild: 'background' | 'inline';
  private readonly onGraphBuilt: ModelMemoryOptions['onGraphBuilt'];
  /** Background builds under way, and who waits for them all to end. */
  private builds = 0;
  private buildWaiters: (() => void)[] = [];
  private disposed = false;
  /** Where large scans run (see searchDenseAsync). */
  private readonly scanThread: ScanThread | undefined;
  /** Vectors asked of `fullVectors` for rescoring so far (those the cache did not hold; benchmarks). */
  vectorsRead = 0;
  /** Bumped when slots are renumbered (compaction): scan results from before no longer apply. */
  private layout = 0;
  private readonly bySlot = (a: number, b: number) => this.compareSlots(a, b);

  constructor(
    readonly dimension: number,
    initialCapacity = 1024,
    options: ModelMemoryOptions = {},
  ) {
    this.codes = sharedCodes(initialCapacity * dimension);
    this.scales = new Float32Array(initialCapacity);
    this.lengths = new Float32Array(initialCapacity);
    this.graphKeys = new Int32Array(initialCapacity).fill(-1);
    this.termStarts = new Int32Array(initialCapacity);
    this.termCounts = new Int32Array(initialCapacity);
    this.memoOrder = new Float64Array(initialCapacity);
    this.dense = { ...DEFAULT_DENSE_OPTIONS, ...options.dense };
    this.fullVectors = options.fullVectors;
    const cacheBytes = options.vectorCacheBytes ?? 0;
    this.recentVectors = this.fullVectors && cacheBytes > 0 ? new SlotVectorCache(cacheBytes, dimension) : undefined;
    this.graphBuild = options.graphBuild ?? 'background';
    this.onGraphBuilt = options.onGraphBuilt;
    this.scanThread = options.scanThread;
  }

  /** Resolves once no graph is being built in the background (tests, benchmarks, shutdown). */
  graphsBuilt(): Promise<void> {
    if (this.builds === 0) return Promise.resolve();
    return new Promise((resolve) => this.buildWaiters.push(resolve));
  }

  /** Stops background builds (each ends at its next slice): this memory is being replaced or closed. */
  dispose(): void {
    this.disposed = true;
    this.recentVectors?.clear();
  }

  get live(): number {
    return this.liveCount;
  }

  get denseOptions(): Readonly<DenseSearchOptions> {
    return this.dense;
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
   * (see {@link adoptGraph}), else a new one. Says which projects took which, and how long it took.
   */
  endBulkLoad(saved: (projectId: string) => SavedGraph | undefined = () => undefined): { projectId: string; adopted: boolean; chunks: number; ms: number }[] {
    this.deferGraphs = false;
    const outcomes: { projectId: string; adopted: boolean; chunks: number; ms: number }[] = [];
    for (const [projectId, project] of this.projects) {
      if (project.ann || project.chunks < this.dense.annMinChunks) continue;
      const started = performance.now();
      const graph = saved(projectId);
      const adopted = graph !== undefined && this.adoptGraph(projectId, project, graph);
      if (!adopted) this.buildGraph(projectId, project);
      outcomes.push({ projectId, adopted, chunks: project.chunks, ms: Math.round(performance.now() - started) });
    }
    return outcomes;
  }

  /**
   * Takes a saved graph as the project's if it still describes it: entries whose chunk is gone or
   * whose memo changed since the save are removed, and live chunks it lacks are added, so it covers
   * exactly the live chunks. Declined when that would touch more than a fifth of it (a new build
   * is then about as quick and better connected) or when its shape differs from the settings.
   */
  private adoptGraph(projectId: string, project: ProjectData, saved: SavedGraph): boolean {
    const { index, chunkIds, changedMemos } = saved;
    if (index.dimensions() !== this.dimension || index.connectivity() !== this.dense.connectivity) return false;
    const byId = new Map<string, number>();
    const live: number[] = [];
    for (let slot = 0; slot < this.slots.length; slot++) {
      const chunk = this.slots[slot];
      if (chunk?.projectId !== projectId) continue;
      live.push(slot);
      if (!changedMemos.has(chunk.memoId)) byId.set(chunk.chunkId, slot);
    }
    const graph: Graph = { index, slots: new Int32Array(Math.max(1, chunkIds.length)).fill(-1), keys: chunkIds.length, changed: false };
    const stale: number[] = [];
    chunkIds.forEach((id, key) => {
      if (id === null) return;
      const slot = byId.get(id);
      if (slot === undefined || this.graphKeys[slot] !== -1) stale.push(key);
      else {
        graph.slots[key] = slot;
        this.graphKeys[slot] = key;
      }
    });
    const missing = live.filter((slot) => this.graphKeys[slot] === -1);
    if (stale.length + missing.length > 0.2 * live.length) {
      for (const slot of live) this.graphKeys[slot] = -1;
      return false;
    }
    if (stale.length > 0) {
      index.remove(BigUint64Array.from(stale, (key) => BigInt(key)));
      graph.changed = true;
    }
    this.addToGraph(graph, missing, true);
    project.ann = graph;
    return true;
  }

  /** Projects whose graph changed since it was built, adopted or last marked saved. */
  unsavedGraphs(): string[] {
    return [...this.projects].filter(([, p]) => p.ann?.changed).map(([projectId]) => projectId);
  }

  /** A project's graph and the chunk under each of its keys (null once removed), for saving. */
  graphSnapshot(projectId: string): { index: AnnIndex; chunkIds: (string | null)[]; count: number } | undefined {
    const graph = this.projects.get(projectId)?.ann;
    if (!graph) return undefined;
    const chunkIds: (string | null)[] = new Array(graph.keys);
    let count = 0;
    for (let key = 0; key < graph.keys; key++) {
      const slot = graph.slots[key]!;
      chunkIds[key] = slot >= 0 ? this.slots[slot]!.chunkId : null;
      if (slot >= 0) count += 1;
    }
    return { index: graph.index, chunkIds, count };
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

  /** (Re)builds a project's graph from its live slots, adding them in parallel batches. */
  private buildGraph(projectId: string, project: ProjectData): void {
    const started = this.prepareBuild(projectId, project);
    if (!started) return;
    this.addToGraph(started.graph, started.queue, true);
    project.ann = started.graph;
  }

  /** Drops the project's graph (and a build under way): a new one, empty, with its live slots to add. */
  private prepareBuild(projectId: string, project: ProjectData): GraphBuild | undefined {
    if (project.building) project.building.cancelled = true;
    project.building = undefined;
    project.ann = undefined;
    const live: number[] = [];
    for (let slot = 0; slot < this.slots.length; slot++) {
      if (this.slots[slot]?.projectId !== projectId) continue;
      live.push(slot);
      this.graphKeys[slot] = -1;
    }
    if (live.length < this.dense.annMinChunks) return undefined;
    const graph: Graph = { index: newAnnIndex(this.dimension, this.dense), slots: new Int32Array(live.length).fill(-1), keys: 0, changed: true };
    return { graph, queue: live, next: 0, cancelled: false };
  }

  /** A graph for the project, built inline or in the background as configured. */
  private requestGraph(projectId: string, project: ProjectData): void {
    if (this.graphBuild === 'inline') return this.buildGraph(projectId, project);
    const build = this.prepareBuild(projectId, project);
    if (!build) return;
    project.building = build;
    this.builds += 1;
    const started = performance.now();
    const finish = () => {
      this.builds -= 1;
      if (this.builds === 0) for (const resolve of this.buildWaiters.splice(0)) resolve();
    };
    const step = () => {
      if (build.cancelled || this.disposed) return finish();
      const sliceStarted = performance.now();
      while (build.next < build.queue.length && performance.now() - sliceStarted < GRAPH_SLICE_MS) {
        const part: number[] = [];
        for (; build.next < build.queue.length && part.length < GRAPH_SLICE_NODES; build.next++) {
          const slot = build.queue[build.next]!;
          // (removed since it was queued, or already in the graph)
          if (this.slots[slot]?.projectId === projectId && this.graphKeys[slot] === -1) part.push(slot);
        }
        this.addToGraph(build.graph, part);
      }
      if (build.next < build.queue.length) {
        setImmediate(step);
        return;
      }
      project.building = undefined;
      project.ann = build.graph;
      finish();
      this.onGraphBuilt?.(projectId, build.graph.index.size(), Math.round(performance.now() - started));
    };
    setImmediate(step);
  }

  /**
   * Adds slots to a graph under new keys (their int8 codes: the graph keeps its own copy), on every
   * core when `parallel` (a build that blocks anyway: loading), else on this thread alone (single
   * chunks, background slices). (usearch sizes its per-thread state when it grows the graph, so the
   * thread count must not rise between growths: one thread never exceeds what any growth reserved.)
   */
  private addToGraph(graph: Graph, slots: readonly number[], parallel = false): void {
    if (slots.length === 0) return;
    const dim = this.dimension;
    if (graph.keys + slots.length > graph.slots.length) {
      const grown = new Int32Array(Math.max(graph.slots.length * 2, graph.keys + slots.length)).fill(-1);
      grown.set(graph.slots);
      graph.slots = grown;
    }
    for (let start = 0; start < slots.length; ) {
      // The first nodes go in one by one: added in parallel into a near-empty graph, some end up
      // poorly linked and unreachable by searches.
      const seeding = graph.index.size() < GRAPH_SEED;
      const part = slots.slice(start, start + (seeding ? GRAPH_SEED - graph.index.size() : 4096));
      start += part.length;
      // A fresh array per batch: usearch ignores a view's byteOffset.
      const vectors = new Int8Array(part.length * dim);
      const keys = new BigUint64Array(part.length);
      part.forEach((slot, i) => {
        vectors.set(this.codes.subarray(slot * dim, (slot + 1) * dim), i * dim);
        const key = graph.keys++;
        keys[i] = BigInt(key);
        graph.slots[key] = slot;
        this.graphKeys[slot] = key;
      });
      graph.index.add(keys, vectors, seeding || !parallel ? 1 : 0);
    }
    graph.changed = true;
  }

  /** Adds a chunk with its vector and its term frequencies (`termFrequencies` of its text). */
  add(chunk: NewChunk, dense: Float32Array, terms: EncodedDocument): void {
    const dim = this.dimension;
    if (dense.length !== dim) {
      throw new Error(`vector of dimension ${dense.length} for a model of dimension ${dim}`);
    }
    const slot = this.slots.length;
    if (slot + 1 > this.scales.length) this.grow(Math.max(this.scales.length * 2, slot + 1));
    const { scale, shrunk } = quantizeStored(dense, this.codes, slot * dim);
    this.scales[slot] = scale;
    if (shrunk) this.shrunk.add(slot);
    this.lengths[slot] = terms.length;
    this.graphKeys[slot] = -1;
    this.memoOrder[slot] = memoOrderKey(chunk.memoId);
    this.keepTermIds(slot, terms.indices);
    // One object shape for every slot (property reads in the search loops stay monomorphic).
    const stored: StoredChunk = {
      chunkId: chunk.chunkId,
      memoId: chunk.memoId,
      projectId: chunk.projectId,
      revision: chunk.revision,
      index: chunk.index,
      content: chunk.content,
      row: chunk.row ?? -1,
    };
    this.slots.push(stored);
    const list = this.byMemo.get(chunk.memoId);
    if (list) list.push(slot);
    else this.byMemo.set(chunk.memoId, [slot]);
    const project = this.project(chunk.projectId);
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
    this.liveCount += 1;
    this.logChange(slot);
    if (!this.deferGraphs) {
      if (project.ann) this.addToGraph(project.ann, [slot]);
      else if (project.building) project.building.queue.push(slot);
      else if (project.chunks >= this.dense.annMinChunks) this.requestGraph(chunk.projectId, project);
    }
  }

  private grow(capacity: number): void {
    const codes = sharedCodes(capacity * this.dimension);
    codes.set(this.codes);
    this.codes = codes;
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    this.scales = scales;
    const lengths = new Float32Array(capacity);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const graphKeys = new Int32Array(capacity).fill(-1);
    graphKeys.set(this.graphKeys);
    this.graphKeys = graphKeys;
    const termStarts = new Int32Array(capacity);
    termStarts.set(this.termStarts);
    this.termStarts = termStarts;
    const termCounts = new Int32Array(capacity);
    termCounts.set(this.termCounts);
    this.termCounts = termCounts;
    const memoOrder = new Float64Array(capacity);
    memoOrder.set(this.memoOrder);
    this.memoOrder = memoOrder;
  }

  /** Appends a slot's term ids to the pool (grown by doubling). */
  private keepTermIds(slot: number, ids: ArrayLike<number>): void {
    if (this.termUsed + ids.length > this.termPool.length) {
      const pool = new Uint32Array(Math.max(this.termPool.length * 2, this.termUsed + ids.length));
      pool.set(this.termPool.subarray(0, this.termUsed));
      this.termPool = pool;
    }
    for (let i = 0; i < ids.length; i++) this.termPool[this.termUsed + i] = ids[i]!;
    this.termStarts[slot] = this.termUsed;
    this.termCounts[slot] = ids.length;
    this.termUsed += ids.length;
  }

  /** Removes a memo's chunks, or those with `from <= index < to` (a range another process rewrote). */
  removeMemo(memoId: string, from = 0, to = Infinity): void {
    const list = this.byMemo.get(memoId);
    if (!list) return;
    const kept: number[] = [];
    for (const slot of list) {
      const chunk = this.slots[slot];
      if (!chunk) continue;
      if (chunk.index < from || chunk.index >= to) {
        kept.push(slot);
        continue;
      }
      this.recentVectors?.delete(slot);
      const project = this.projects.get(chunk.projectId)!;
      project.chunks -= 1;
      project.totalLength -= this.lengths[slot]!;
      const start = this.termStarts[slot]!;
      const end = start + this.termCounts[slot]!;
      for (let t = start; t < end; t++) {
        const p = project.postings.get(this.termPool[t]!);
        if (p) p.df -= 1;
      }
      const key = this.graphKeys[slot]!;
      const graph = project.ann ?? project.building?.graph;
      if (graph && key >= 0) {
        graph.index.remove(BigInt(key));
        graph.slots[key] = -1;
        graph.changed = true;
      }
      this.graphKeys[slot] = -1;
      this.slots[slot] = undefined;
      this.liveCount -= 1;
      this.deadCount += 1;
      this.logChange(slot);
    }
    if (kept.length > 0) this.byMemo.set(memoId, kept);
    else this.byMemo.delete(memoId);
    if (this.deadCount > 4096 && this.deadCount > this.liveCount) this.compact();
  }

  /** Drops dead slots: live ones move down; postings, memo lists and graphs follow them. */
  private compact(): void {
    const dim = this.dimension;
    const remap = new Int32Array(this.slots.length).fill(-1);
    const capacity = Math.max(1024, this.liveCount * 2);
    const codes = sharedCodes(capacity * dim);
    const scales = new Float32Array(capacity);
    const lengths = new Float32Array(capacity);
    const termStarts = new Int32Array(capacity);
    const termCounts = new Int32Array(capacity);
    const memoOrder = new Float64Array(capacity);
    let termUsed = 0;
    for (let old = 0; old < this.slots.length; old++) if (this.slots[old]) termUsed += this.termCounts[old]!;
    const termPool = new Uint32Array(Math.max(4096, termUsed * 2));
    termUsed = 0;
    const slots: StoredChunk[] = [];
    this.slots.forEach((chunk, old) => {
      if (!chunk) return;
      const slot = slots.length;
      remap[old] = slot;
      codes.set(this.codes.subarray(old * dim, (old + 1) * dim), slot * dim);
      scales[slot] = this.scales[old]!;
      lengths[slot] = this.lengths[old]!;
      memoOrder[slot] = this.memoOrder[old]!;
      const start = this.termStarts[old]!;
      const count = this.termCounts[old]!;
      termPool.set(this.termPool.subarray(start, start + count), termUsed);
      termStarts[slot] = termUsed;
      termCounts[slot] = count;
      termUsed += count;
      slots.push(chunk);
    });
    for (const project of this.projects.values()) {
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
    for (const [memoId, list] of this.byMemo) this.byMemo.set(memoId, list.map((old) => remap[old]!));
    this.recentVectors?.remap(remap);
    this.shrunk = new Set([...this.shrunk].map((old) => remap[old]!).filter((slot) => slot >= 0));
    this.slots.length = 0;
    for (const chunk of slots) this.slots.push(chunk); // (not push(...slots): a spread of 100k+ arguments overflows the stack)
    this.codes = codes;
    this.scales = scales;
    this.lengths = lengths;
    this.graphKeys = new Int32Array(capacity).fill(-1);
    this.termPool = termPool;
    this.termUsed = termUsed;
    this.termStarts = termStarts;
    this.termCounts = termCounts;
    this.memoOrder = memoOrder;
    this.deadCount = 0;
    this.changeLogStart += this.changeLog.length;
    this.changeLog = [];
    this.layout += 1;
    for (const [projectId, project] of this.projects) {
      if (project.chunks === 0 && project.postings.size === 0) {
        if (project.building) project.building.cancelled = true;
        this.projects.delete(projectId);
      } else if (project.ann || project.building) this.requestGraph(projectId, project);
    }
  }

  /** Notes a slot added or removed, for the cached findable sets (see changeLog). */
  private logChange(slot: number): void {
    if (this.changeLog.length >= MAX_SLOT_CHANGES) {
      this.changeLogStart += this.changeLog.length;
      this.changeLog = [];
    }
    this.changeLog.push(slot);
  }

  /**
   * The findable slots for a set of eligible memos (chunks of those memos at their revision), as a
   * list for scans and a mask for postings. Built once per eligible set (a walk of its memos' slots:
   * ~4 ms at 100k chunks), then caught up at each use with the slots added or removed and, for an
   * {@link EligibleMemos}, the memos changed since: a search after a write pays for the change alone
   * (and the list, read off the mask), not for the whole set again.
   */
  private findable(eligible: Map<string, number>): FindableSlots {
    let found = this.slotSets.get(eligible);
    const logEnd = this.changeLogStart + this.changeLog.length;
    if (!found || found.layout !== this.layout || found.logged < this.changeLogStart) {
      found = this.findableAfresh(eligible);
      this.slotSets.set(eligible, found);
    }
    // Slots that became findable past the end of the list (new chunks: the usual change) are appended;
    // any other change has the list read off the mask again.
    const last = found.slots.length > 0 ? found.slots[found.slots.length - 1]! : -1;
    const appended: number[] = [];
    let reread = false;
    const refresh = (slot: number) => {
      const change = this.refreshFindable(found!, eligible, slot);
      if (change === 1 && slot > last) appended.push(slot);
      else if (change !== 0) reread = true;
    };
    for (let i = found.logged - this.changeLogStart; i < this.changeLog.length; i++) refresh(this.changeLog[i]!);
    found.logged = logEnd;
    if (eligible instanceof EligibleMemos) {
      for (let i = found.memosSeen; i < eligible.changed.length; i++) for (const slot of this.byMemo.get(eligible.changed[i]!) ?? []) refresh(slot);
      found.memosSeen = eligible.changed.length;
    }
    // (a new list, not rewritten in place: a search waiting on the scan thread still holds the old one)
    if (reread) {
      found.slots = maskedSlots(found.mask, found.count);
    } else if (appended.length > 0) {
      const slots = new Uint32Array(found.slots.length + appended.length);
      slots.set(found.slots);
      slots.set(appended.sort((a, b) => a - b), found.slots.length);
      found.slots = slots;
    }
    return found;
  }

  /** A findable set built from scratch: the mask first, then the ascending list read off it. */
  private findableAfresh(eligible: Map<string, number>): FindableSlots {
    const mask = new Uint8Array(this.slots.length);
    let count = 0;
    for (const [memoId, revision] of eligible) {
      const list = this.byMemo.get(memoId);
      if (!list) continue;
      for (const slot of list) {
        if (this.slots[slot]?.revision === revision && mask[slot] === 0) {
          mask[slot] = 1;
          count += 1;
        }
      }
    }
    const memosSeen = eligible instanceof EligibleMemos ? eligible.changed.length : 0;
    return { layout: this.layout, logged: this.changeLogStart + this.changeLog.length, memosSeen, slots: maskedSlots(mask, count), mask, count };
  }

  /**
   * Sets a slot's bit in a findable set from the slot and the eligible memos as they are now: 1 when
   * it became findable, -1 when it stopped being, 0 when unchanged.
   */
  private refreshFindable(found: FindableSlots, eligible: Map<string, number>, slot: number): -1 | 0 | 1 {
    const chunk = this.slots[slot];
    const bit = chunk !== undefined && eligible.get(chunk.memoId) === chunk.revision ? 1 : 0;
    if (slot >= found.mask.length) {
      if (bit === 0) return 0;
      const mask = new Uint8Array(Math.max(slot + 1, found.mask.length * 2, 1024));
      mask.set(found.mask);
      found.mask = mask;
    }
    if (found.mask[slot] === bit) return 0;
    found.mask[slot] = bit;
    found.count += bit === 1 ? 1 : -1;
    return bit === 1 ? 1 : -1;
  }

  /** Findable chunks: those of eligible memos at the eligible revision. */
  count(eligible: Map<string, number>): number {
    return this.findable(eligible).count;
  }

  /** Equal scores: memo uuid, then chunk index. */
  private compareSlots(a: number, b: number): number {
    const keyA = this.memoOrder[a]!;
    const keyB = this.memoOrder[b]!;
    if (keyA !== keyB && keyA >= 0 && keyB >= 0) return keyA - keyB;
    const x = this.slots[a]!;
    const y = this.slots[b]!;
    return x.memoId < y.memoId ? -1 : x.memoId > y.memoId ? 1 : x.index - y.index;
  }

  /**
   * Dense top-k in three stages: candidates (the graph's int8 × int8 neighbours, or every findable
   * slot), the best `limit + rescoreMargin` of them by the full-precision query against their int8
   * vectors, and the best `exactTop + rescoreMargin` of those rescored with their full-precision
   * vectors (those kept in memory, the others from disk through `fullVectors` in one read: ~15 µs a
   * chunk); the others keep their int8 estimates.
   */
  searchDense(query: Float32Array, eligible: Map<string, number>, limit: number, catalog: CatalogMemory, projectId?: string, exactTop = limit): ChunkCandidate[] {
    const plan = this.densePlan(query, eligible, limit, projectId);
    return plan ? this.rankDense(query, plan, this.candidatesHere(plan), limit, exactTop, catalog) : [];
  }

  /**
   * `searchDense`, with its exact scan on the scan thread when there is one, engaged (its gate open:
   * see SpareCpuGate), and the model has at least {@link SCAN_THREAD_MIN_SLOTS} slots: the caller's
   * thread is free meanwhile (a hybrid search runs BM25 then). The slots found are those of the model
   * as it was when the search began: chunks added meanwhile are not findable (as for a search that
   * began before them), chunks removed meanwhile are skipped, and a compaction meanwhile (slots
   * renumbered) has the search run again here.
   */
  async searchDenseAsync(
    query: Float32Array,
    eligible: Map<string, number>,
    limit: number,
    catalog: CatalogMemory,
    projectId?: string,
    exactTop = limit,
  ): Promise<ChunkCandidate[]> {
    const thread = this.scanThread;
    const plan = this.densePlan(query, eligible, limit, projectId);
    if (!plan) return [];
    // (a scan of few slots, a filtered one say, costs less here than the hop to the thread and back)
    const scanned = plan.scan ? (plan.scan.slots?.length ?? plan.scan.total) : 0;
    if (!plan.scan || !thread?.engaged || scanned < SCAN_THREAD_MIN_SLOTS) return this.rankDense(query, plan, this.candidatesHere(plan), limit, exactTop, catalog);
    const layout = this.layout;
    let keys: Uint32Array | undefined;
    try {
      keys = await thread.scan({ ...plan.scan, codes: this.codes });
    } catch {
      // (scanned here instead, below)
    }
    if (this.disposed) return [];
    // (renumbered slots make the plan's slots and mask stale: plan again)
    if (layout !== this.layout) return this.searchDense(query, eligible, limit, catalog, projectId, exactTop);
    return this.rankDense(query, plan, keys ? this.scanFound(keys, plan.scan, plan.mask) : this.candidatesHere(plan), limit, exactTop, catalog);
  }

  /** What a dense search looks at: the findable slots, and the graph's candidates or a scan to make. */
  private densePlan(query: Float32Array, eligible: Map<string, number>, limit: number, projectId: string | undefined): DensePlan | undefined {
    if (limit <= 0) return undefined;
    const { slots, mask } = this.findable(eligible);
    if (slots.length === 0) return undefined;
    const depth = limit + this.dense.rescoreMargin;
    const project = projectId === undefined ? undefined : this.projects.get(projectId);
    if (project?.ann && slots.length >= this.dense.annMinShare * project.chunks) {
      const share = slots.length / Math.max(1, project.chunks);
      const graph = this.graphCandidates(project.ann, query, mask, Math.max(this.dense.graphCandidates, 2 * depth), share);
      if (graph) return { slots, mask, depth, graph };
    }
    const scan = this.scanPlan(query, slots, depth);
    return scan ? { slots, mask, depth, scan } : { slots, mask, depth };
  }

  /** A plan's candidates found in this thread: the graph's, the scan's, or (undefined) every findable slot. */
  private candidatesHere(plan: DensePlan): ArrayLike<number> | undefined {
    return plan.graph ?? (plan.scan && this.scanFound(scanHere(this.codes, plan.scan), plan.scan, plan.mask));
  }

  /**
   * The dense top-k from candidate slots (every findable one when there are none): the best `depth`
   * by the full-precision query against their int8 vectors, then the best `exactTop + rescoreMargin`
   * of those rescored with their full-precision vectors. Slots removed since the candidates were
   * found are skipped.
   */
  private rankDense(query: Float32Array, plan: DensePlan, candidates: ArrayLike<number> | undefined, limit: number, exactTop: number, catalog: CatalogMemory): ChunkCandidate[] {
    const source: ArrayLike<number> = candidates ?? plan.slots;
    const live = new Uint32Array(source.length);
    let n = 0;
    for (let i = 0; i < source.length; i++) {
      const slot = source[i]!;
      if (this.slots[slot] !== undefined) live[n++] = slot;
    }
    // (the cosine of the full-precision query with each one's int8 vector, natively: 232 in 8-12 µs against 38-62 µs in a JS loop)
    const slots = live.subarray(0, n);
    const estimates = estimateRows({ codes: this.codes, dimension: this.dimension, scales: this.scales, query, slots, out: new Float64Array(n) });
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
        missing.push(this.slots[slots[i]!]!);
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
    const total = this.slots.length;
    if (slots.length < this.dense.simdScanMinChunks) return undefined;
    const codes = new Int8Array(this.dimension);
    quantize(query, codes, 0);
    // The int8 × int8 order differs a little from the float query's estimates: take twice the depth
    // (four times before codes shared one norm; bench/search.bench.ts at 100k: recall@10 0.9972 both,
    // Cranfield/Vaswani nDCG@10 unchanged, the estimates of half as many candidates spared).
    const k = Math.min(slots.length, Math.max(2 * depth, SIMD_SCAN_MIN_CANDIDATES));
    const byProduct = codesShareNorm(this.dimension) && this.shrunk.size <= total * MAX_SHRUNK_SHARE;
    // (the list only where some slots are not findable: without one the scan reads every slot)
    // (unordered: rankDense ranks them again by the float query, in an order of its own)
    return { dimension: this.dimension, total, query: codes, k, cosine: !byProduct, unordered: true, ...(slots.length < total ? { slots } : {}) };
  }

  /**
   * A scan's slots (all findable: it scanned only those), with (when it ranked by inner product)
   * every findable slot whose codes were shrunk, which that order would put a little low.
   */
  private scanFound(keys: Uint32Array, scan: ExactScan, mask: Uint8Array): ArrayLike<number> {
    if (scan.cosine || this.shrunk.size === 0) return keys;
    const found = Array.from(keys);
    const taken = new Set(found);
    for (const slot of this.shrunk) if (mask[slot] === 1 && !taken.has(slot)) found.push(slot);
    return found;
  }

  /** The graph's nearest findable slots, or undefined when the filters leave it too few. */
  private graphCandidates(graph: Graph, query: Float32Array, mask: Uint8Array, depth: number, share: number): number[] | undefined {
    // (wanted: enough neighbours that `depth` of them pass the filters at their share of the project)
    const codes = new Int8Array(this.dimension);
    quantize(query, codes, 0);
    const size = graph.index.size();
    const wanted = Math.min(size, Math.ceil((depth / share) * 1.2));
    if (wanted <= 0) return undefined;
    const { keys } = graph.index.search(codes, wanted, 1);
    const found: number[] = [];
    for (let i = 0; i < keys.length && found.length < depth; i++) {
      const slot = graph.slots[Number(keys[i]!)] ?? -1;
      if (slot >= 0 && mask[slot] === 1) found.push(slot);
    }
    return found.length < Math.min(depth, Math.floor(share * size)) ? undefined : found;
  }

  /** BM25 parameters of a project: N, avgdl. */
  private statistics(project: ProjectData): { n: number; avgdl: number } {
    return { n: project.chunks, avgdl: project.chunks > 0 ? Math.max(1, project.totalLength / project.chunks) : 1 };
  }

  /** An upper bound of a term's saturation at `avgdl`, recomputed only when avgdl outgrew it. */
  private bound(p: Postings, avgdl: number): number {
    if (p.boundAvgdl < avgdl) {
      p.boundAvgdl = avgdl * 1.1;
      let max = 0;
      for (let i = 0; i < p.n; i++) max = Math.max(max, saturation(p.tfs[i]!, this.lengths[p.slots[i]!]!, p.boundAvgdl));
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
  private sparseTerms(query: SparseVector, project: ProjectData, avgdl: number): QueryTerm[] {
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
    if (this.sums.length < this.slots.length) {
      this.sums = new Float64Array(Math.max(1024, this.slots.length * 2));
      // (one more: the native walk writes one entry past the slots it lists)
      this.touched = new Int32Array(this.sums.length + 1);
    }
    return { sums: this.sums, touched: this.touched };
  }

  /**
   * BM25 top-k within the project and filters by MaxScore, a term at a time, in the native addon
   * (@memex/vector-scan's sparseTopK): terms are taken from the highest upper bound down, each
   * adding its contributions to per-slot sums; once the bounds of the terms left sum below the k-th
   * best sum so far, their (long, low-idf) posting lists are only probed, by galloping, for the
   * chunks that can still get in. Sums follow {@link sparseTerms}'s order, so scores equal
   * {@link searchSparseExhaustive}'s bit for bit; equal scores are ordered here, by memo and chunk.
   */
  searchSparse(query: SparseVector, projectId: string, eligible: Map<string, number>, limit: number, catalog: CatalogMemory): ChunkCandidate[] {
    const scan = this.sparseScan(query, projectId, eligible, limit);
    if (!scan) return [];
    const hits = sparseTopK(scan);
    const top = new TopK<number>(limit, this.bySlot);
    for (let i = 0; i < hits.slots.length; i++) top.offer(hits.scores[i]!, hits.slots[i]!);
    return top.sorted().map(({ score, item }) => this.candidate(item, score, catalog));
  }

  /**
   * What {@link searchSparse} asks of the addon for this query (none when no term is in the
   * project): the terms in the order their contributions are summed, each slot's length, which
   * slots may be found, and the scratch. Valid until the index changes. (Also what
   * bench:sparse-pair runs through two builds of the addon.)
   */
  sparseScan(query: SparseVector, projectId: string, eligible: Map<string, number>, limit: number): SparseScan | undefined {
    const project = this.projects.get(projectId);
    if (!project || limit <= 0) return undefined;
    const { k1, b } = DEFAULT_BM25_OPTIONS;
    const { avgdl } = this.statistics(project);
    const terms = this.sparseTerms(query, project, avgdl);
    if (terms.length === 0) return undefined;
    const { sums, touched } = this.sparseScratch();
    return { terms, lengths: this.lengths, mask: this.findable(eligible).mask, base: k1 * (1 - b), perLength: (k1 * b) / avgdl, k: limit, sums, touched };
  }

  /** BM25 by scoring every posting of every query term: the reference {@link searchSparse} equals. */
  searchSparseExhaustive(query: SparseVector, projectId: string, eligible: Map<string, number>, limit: number, catalog: CatalogMemory): ChunkCandidate[] {
    const project = this.projects.get(projectId);
    if (!project || limit <= 0) return [];
    const { k1, b } = DEFAULT_BM25_OPTIONS;
    const { avgdl } = this.statistics(project);
    const { mask } = this.findable(eligible);
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
        sums[slot] = sums[slot]! + (weight * tf) / (tf + base + perLength * this.lengths[slot]!);
      }
    }
    const top = new TopK<number>(limit, this.bySlot);
    for (let i = 0; i < count; i++) {
      const slot = touched[i]!;
      top.offer(sums[slot]!, slot);
      sums[slot] = 0;
    }
    return top.sorted().map(({ score, item }) => this.candidate(item, score, catalog));
  }

  private candidate(slot: number, score: number, catalog: CatalogMemory): ChunkCandidate {
    return new SlotCandidate(this.slots[slot]!, score, catalog);
  }
}

/**
 * A chunk a ranking found. Its memo's title and summary are looked up in the catalog only when read:
 * of the ~200 candidates of a search, fusion keeps the best few and reads them for those alone.
 */
class SlotCandidate implements ChunkCandidate {
  readonly chunkId: string;
  readonly memoId: string;
  readonly chunkIndex: number;
  readonly content: string;
  readonly key: number | undefined;
  readonly #catalog: CatalogMemory;

  constructor(
    chunk: StoredChunk,
    readonly score: number,
    catalog: CatalogMemory,
  ) {
    this.chunkId = chunk.chunkId;
    // (its row: unique among the chunks of a model, and the same in both rankings of a search)
    this.key = chunk.row >= 0 ? chunk.row : undefined;
    this.memoId = chunk.memoId;
    this.chunkIndex = chunk.index;
    this.content = chunk.content;
    this.#catalog = catalog;
  }

  get memoTitle(): string {
    return this.#catalog.entries.get(this.memoId)?.memo?.title ?? '';
  }

  get memoSummary(): string {
    return this.#catalog.entries.get(this.memoId)?.memo?.summary ?? '';
  }
}
