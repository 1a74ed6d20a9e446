/**
 * The HNSW graphs of one model's large projects (usearch, int8, cosine): built at loading, adopted
 * from a saved file when it still fits, or built a slice at a time in the background as a project
 * grows; searched for a dense ranking's candidates.
 */
import usearch from 'usearch';
import type { DenseSearchOptions } from './denseOptions';
import { quantize } from './quantize';
import type { SlotStore } from './slots';

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

/** What a project holds of its graph: the one searched, and one being built. */
export interface GraphedProject {
  /** Live chunks of the project. */
  chunks: number;
  ann: Graph | undefined;
  building: GraphBuild | undefined;
}

/** Nodes a graph takes one at a time before parallel insertion starts. */
const GRAPH_SEED = 1024;
/** A background build adds nodes for about this long before it lets other work run. */
const GRAPH_SLICE_MS = 10;
/** Nodes per usearch call during a background build (a call cannot be interrupted). */
const GRAPH_SLICE_NODES = 64;

/** Builds, adopts, grows and searches the graphs of one model's projects. */
export class ProjectGraphs {
  /** Background builds under way, and who waits for them all to end. */
  private builds = 0;
  private buildWaiters: (() => void)[] = [];
  private disposed = false;

  constructor(
    private readonly store: SlotStore,
    private readonly dense: DenseSearchOptions,
    private readonly mode: 'background' | 'inline',
    private readonly onGraphBuilt: ((projectId: string, chunks: number, ms: number) => void) | undefined,
  ) {}

  /** Resolves once no graph is being built in the background (tests, benchmarks, shutdown). */
  built(): Promise<void> {
    if (this.builds === 0) return Promise.resolve();
    return new Promise((resolve) => this.buildWaiters.push(resolve));
  }

  /** Stops background builds (each ends at its next slice). */
  dispose(): void {
    this.disposed = true;
  }

  /**
   * Takes a saved graph as the project's if it still describes it: entries whose chunk is gone or
   * whose memo changed since the save are removed, and live chunks it lacks are added, so it covers
   * exactly the live chunks. Declined when that would touch more than a fifth of it (a new build
   * is then about as quick and better connected) or when its shape differs from the settings.
   */
  adopt(projectId: string, project: GraphedProject, saved: SavedGraph): boolean {
    const { index, chunkIds, changedMemos } = saved;
    if (index.dimensions() !== this.store.dimension || index.connectivity() !== this.dense.connectivity) return false;
    const byId = new Map<string, number>();
    const live: number[] = [];
    for (let slot = 0; slot < this.store.size; slot++) {
      const chunk = this.store.chunks[slot];
      if (chunk?.projectId !== projectId) continue;
      live.push(slot);
      if (!changedMemos.has(chunk.memoId)) byId.set(chunk.chunkId, slot);
    }
    const graph: Graph = { index, slots: new Int32Array(Math.max(1, chunkIds.length)).fill(-1), keys: chunkIds.length, changed: false };
    const stale: number[] = [];
    chunkIds.forEach((id, key) => {
      if (id === null) return;
      const slot = byId.get(id);
      if (slot === undefined || this.store.graphKeys[slot] !== -1) stale.push(key);
      else {
        graph.slots[key] = slot;
        this.store.graphKeys[slot] = key;
      }
    });
    const missing = live.filter((slot) => this.store.graphKeys[slot] === -1);
    if (stale.length + missing.length > 0.2 * live.length) {
      for (const slot of live) this.store.graphKeys[slot] = -1;
      return false;
    }
    if (stale.length > 0) {
      index.remove(BigUint64Array.from(stale, (key) => BigInt(key)));
      graph.changed = true;
    }
    this.add(graph, missing, true);
    project.ann = graph;
    return true;
  }

  /** A graph and the chunk under each of its keys (null once removed), for saving. */
  snapshot(graph: Graph | undefined): { index: AnnIndex; chunkIds: (string | null)[]; count: number } | undefined {
    if (!graph) return undefined;
    const chunkIds: (string | null)[] = new Array(graph.keys);
    let count = 0;
    for (let key = 0; key < graph.keys; key++) {
      const slot = graph.slots[key]!;
      chunkIds[key] = slot >= 0 ? this.store.chunks[slot]!.chunkId : null;
      if (slot >= 0) count += 1;
    }
    return { index: graph.index, chunkIds, count };
  }

  /** (Re)builds a project's graph from its live slots, adding them in parallel batches. */
  build(projectId: string, project: GraphedProject): void {
    const started = this.prepareBuild(projectId, project);
    if (!started) return;
    this.add(started.graph, started.queue, true);
    project.ann = started.graph;
  }

  /** Drops the project's graph (and a build under way): a new one, empty, with its live slots to add. */
  private prepareBuild(projectId: string, project: GraphedProject): GraphBuild | undefined {
    if (project.building) project.building.cancelled = true;
    project.building = undefined;
    project.ann = undefined;
    const live: number[] = [];
    for (let slot = 0; slot < this.store.size; slot++) {
      if (this.store.chunks[slot]?.projectId !== projectId) continue;
      live.push(slot);
      this.store.graphKeys[slot] = -1;
    }
    if (live.length < this.dense.annMinChunks) return undefined;
    const graph: Graph = { index: newAnnIndex(this.store.dimension, this.dense), slots: new Int32Array(live.length).fill(-1), keys: 0, changed: true };
    return { graph, queue: live, next: 0, cancelled: false };
  }

  /** A graph for the project, built inline or in the background as configured. */
  request(projectId: string, project: GraphedProject): void {
    if (this.mode === 'inline') return this.build(projectId, project);
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
          if (this.store.chunks[slot]?.projectId === projectId && this.store.graphKeys[slot] === -1) part.push(slot);
        }
        this.add(build.graph, part);
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
  add(graph: Graph, slots: readonly number[], parallel = false): void {
    if (slots.length === 0) return;
    const dim = this.store.dimension;
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
        vectors.set(this.store.codes.subarray(slot * dim, (slot + 1) * dim), i * dim);
        const key = graph.keys++;
        keys[i] = BigInt(key);
        graph.slots[key] = slot;
        this.store.graphKeys[slot] = key;
      });
      graph.index.add(keys, vectors, seeding || !parallel ? 1 : 0);
    }
    graph.changed = true;
  }


  /** The graph's nearest findable slots, or undefined when the filters leave it too few. */
  candidates(graph: Graph, query: Float32Array, mask: Uint8Array, depth: number, share: number): number[] | undefined {
    // (wanted: enough neighbours that `depth` of them pass the filters at their share of the project)
    const codes = new Int8Array(this.store.dimension);
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

  /** Takes a removed slot out of the project's graph (the one searched, or the one being built). */
  remove(project: GraphedProject, slot: number): void {
    const key = this.store.graphKeys[slot]!;
    const graph = project.ann ?? project.building?.graph;
    if (graph && key >= 0) {
      graph.index.remove(BigInt(key));
      graph.slots[key] = -1;
      graph.changed = true;
    }
  }
}
