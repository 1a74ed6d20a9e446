import { basename, dirname, join } from 'node:path';
import { checkpointAfterErase, compressText, decompressText, inTransaction, mapInTurns, nextTurn, openSqlite, type SqliteDatabase } from '@memex/runtime';
import type { MemoAttributes } from '@memex/contracts';
import type { SparseVector } from '@memex/text';
import { GraphFiles } from './graphFiles';
import { WRITE_TURN_MS } from './writeTurn';
import { ScanThread } from './scanThread';
import type { CpuLimits } from './cpuLimits';
import { SpareCpuGate } from './spareCpu';
import { CatalogMemory } from './catalog';
import type { DenseSearchOptions } from './denseOptions';
import type { SavedGraph } from './graph';
import { ModelMemory, type ModelMemoryOptions } from './model';
import { attributesJson, decodeDense, decodeTerms, encodeDense, encodeTerms, rowAttributes, toEntry, type CatalogRow, type ChunkRow, type EncodedChunk } from './rows';
import { ALL_CHUNKS, ALL_MODELS, prepareIndexFile, prepareStatements, spanning, type ChunkRange, type Statements } from './schema';
import { SavedGraphs } from './savedGraphs';
import { readFullVectors } from './fullVectors';
import type { CandidateQuery, CatalogEntry, CatalogUpdate, ChunkCandidate, ChunksOfMemo, IndexedChunk, SearchIndex, StoredChunkText } from '../port';

/** What a step of `writeInTurns` returns when its item is not finished: it goes on in the next transaction. */
const UNFINISHED = Symbol('unfinished');


/** What became of a project's HNSW graph when its model was loaded. */
export interface GraphLoadEvent {
  model: string;
  projectId: string;
  /**
   * `loaded`: the saved graph, brought up to date; `built`: a new one at loading, with why the saved
   * one was not used, or in the background once the project grew large enough (or was compacted).
   */
  outcome: 'loaded' | 'built';
  reason?: string;
  /** The project's chunks, and the time taken to load or build its graph. */
  chunks: number;
  ms: number;
}

export interface EmbeddedIndexOptions {
  dense?: Partial<DenseSearchOptions>;
  /**
   * Where HNSW graphs are saved, to be loaded at the next start instead of rebuilt: by default a
   * directory beside the SQLite file (`index.graphs` for `index.db`); false keeps them in memory only.
   */
  graphDir?: string | false;
  /** How graphs needed after loading are built (see {@link ModelMemoryOptions.graphBuild}): background by default. */
  graphBuild?: ModelMemoryOptions['graphBuild'];
  onGraph?: (event: GraphLoadEvent) => void;
  /**
   * Rows as compact as this version reads them (chunk text and catalog attributes deflated, u16 term frequencies); false
   * writes them as earlier versions did, for a rolling upgrade where those still share the file
   * (`MEMEX_SEAL_DEFLATE=false`). Both forms are always read.
   */
  compact?: boolean;
  /** {@link WRITE_TURN_MS} (0: a row per transaction). */
  writeTurnMs?: number;
  /** See {@link ModelMemoryOptions.vectorCacheBytes}. */
  vectorCacheBytes?: number;
  /**
   * Whether large exact dense scans run on a second thread while BM25 runs on this one (see
   * ScanThread; the thread starts with the first such scan): true by default here; `when-spare`:
   * only while the machine has CPU to spare (SpareCpuGate). The indexer passes INDEXER_SCAN_THREAD
   * (by default, true with more than 2 cores and `when-spare` with 2 or fewer: see scanThreadEnabled).
   */
  scanThread?: boolean | 'when-spare';
  /** The CPU this process may use, for `when-spare` (read here when not given: see readCpuLimits). */
  cpu?: CpuLimits;
  /** Told once if the scan thread stops serving (scans then run in this thread). */
  onScanThreadFailure?: (reason: string) => void;
}

/** Changes older than this are pruned; a process further behind reloads everything. */
const CHANGE_RETENTION_MS = 60 * 60 * 1000;


/**
 * The embedded search index: SQLite in the data directory is the durable copy; searches run on an
 * in-memory copy (int8 vectors with an HNSW graph per large project, best candidates rescored with the stored floats;
 * exact scans for small projects and selective filters). Several indexer processes may share
 * the file: each write logs the memo it touched, and before every read a process applies the log
 * entries written by others since its last look (`PRAGMA data_version` makes the check nearly free).
 */
export class EmbeddedSearchIndex implements SearchIndex {
  readonly kind = 'embedded' as const;
  private readonly db: SqliteDatabase;
  private readonly catalog = new CatalogMemory();
  private readonly models = new Map<string, ModelMemory>();
  private lastSeq = 0;
  private dataVersion = -1;
  private dirty = false;
  private writes = 0;
  private readonly stmts: Statements;
  private readonly graphs: SavedGraphs | undefined;
  private readonly instance: string;
  private readonly scanThread: ScanThread | undefined;
  /** What opens the scan thread to scans with `scanThread: 'when-spare'`. */
  private readonly spareCpu: SpareCpuGate | undefined;

  constructor(
    path: string,
    private readonly options: EmbeddedIndexOptions = {},
  ) {
    this.db = openSqlite(path);
    this.instance = prepareIndexFile(this.db);
    this.stmts = prepareStatements(this.db);
    const graphDir = options.graphDir ?? join(dirname(path), `${basename(path).replace(/\.db$/, '')}.graphs`);
    this.graphs = graphDir === false ? undefined : new SavedGraphs(new GraphFiles(graphDir), this.instance, this.stmts);
    const gate =
      options.scanThread === 'when-spare'
        ? new SpareCpuGate({ threadCpuMs: () => this.scanThread?.cpuMs ?? 0, ...(options.cpu ? { limits: options.cpu } : {}) })
        : undefined;
    this.scanThread = options.scanThread === false ? undefined : new ScanThread(options.onScanThreadFailure, gate);
    this.spareCpu = gate?.start();
    this.reloadAll();
  }

  /** Loads the catalog and every open model from disk (start, or after falling too far behind). */
  private reloadAll(): void {
    this.lastSeq = this.stmts.maxSeq.get()?.s ?? 0;
    this.catalog.clear();
    for (const row of this.stmts.allCatalog.iterate()) this.catalog.set(toEntry(row));
    for (const [model, memory] of this.models) this.loadModel(model, memory.dimension);
    this.dataVersion = this.stmts.dataVersion.get()!;
  }

  private loadModel(model: string, dimension: number): void {
    this.models.get(model)?.dispose();
    const memory: ModelMemory = new ModelMemory(dimension, 1024, {
      dense: this.options.dense,
      ...(this.options.graphBuild ? { graphBuild: this.options.graphBuild } : {}),
      ...(this.options.vectorCacheBytes !== undefined ? { vectorCacheBytes: this.options.vectorCacheBytes } : {}),
      ...(this.scanThread ? { scanThread: this.scanThread } : {}),
      // A graph built in the background is saved at once, like one built at loading.
      onGraphBuilt: (projectId, chunks, ms) => {
        if (this.models.get(model) !== memory || !this.db.open) return;
        this.saveGraph(model, memory, projectId);
        this.options.onGraph?.({ model, projectId, outcome: 'built', reason: 'built in the background as the project grew', chunks, ms });
      },
      // Memory holds int8 vectors; the few best candidates are rescored with the stored ones.
      fullVectors: (chunks) => readFullVectors(this.stmts, model, dimension, chunks),
    });
    memory.beginBulkLoad();
    for (const row of this.stmts.chunksOfModel.iterate(model)) this.addRow(memory, row);
    const rejected = new Map<string, string>();
    const outcomes = memory.endBulkLoad((projectId) => {
      const saved = this.savedGraph(model, memory, projectId);
      if (!('reason' in saved)) return saved;
      rejected.set(projectId, saved.reason);
      return undefined;
    });
    this.models.set(model, memory);
    for (const { projectId, adopted, chunks, ms } of outcomes) {
      // A graph just built is saved at once, so that even a crash later does not cost the build again.
      if (!adopted) this.saveGraph(model, memory, projectId);
      this.options.onGraph?.(
        adopted
          ? { model, projectId, outcome: 'loaded', chunks, ms }
          : { model, projectId, outcome: 'built', reason: rejected.get(projectId) ?? 'saved graph did not fit the chunks', chunks, ms },
      );
    }
  }

  /** A project's saved graph, if it still fits (see SavedGraphs.load); else why not. */
  private savedGraph(model: string, memory: ModelMemory, projectId: string): SavedGraph | { reason: string } {
    return this.graphs ? this.graphs.load(model, memory, projectId) : { reason: 'graphs are not saved' };
  }

  /** Saves a project's graph as of the last change applied; a failure only costs a rebuild later. */
  private saveGraph(model: string, memory: ModelMemory, projectId: string): void {
    this.graphs?.save(model, memory, projectId, this.lastSeq);
  }

  /** Saves every graph that changed since it was loaded, built or saved. */
  saveGraphs(): void {
    this.sync();
    for (const [model, memory] of this.models) for (const projectId of memory.unsavedGraphs()) this.saveGraph(model, memory, projectId);
  }

  /** Ids repeat across chunks of a memo and memos of a project: keep one copy of each string. */
  private readonly ids = new Map<string, string>();
  private intern(id: string): string {
    const known = this.ids.get(id);
    if (known !== undefined) return known;
    this.ids.set(id, id);
    return id;
  }

  private addRow(memory: ModelMemory, row: ChunkRow): void {
    memory.add(
      {
        chunkId: row.chunk_id,
        memoId: this.intern(row.memo_id),
        projectId: this.intern(row.project_id),
        revision: row.revision,
        index: row.idx,
        content: decompressText(row.content),
        row: row.rowid,
      },
      decodeDense(row.dense, memory.dimension),
      decodeTerms(row.terms),
    );
  }

  /** Applies what this and other processes wrote since the last look. */
  private sync(): void {
    const version = this.stmts.dataVersion.get()!;
    if (!this.dirty && version === this.dataVersion) return;
    this.dirty = false;
    this.dataVersion = version;
    const oldest = this.stmts.minSeq.get()?.s ?? 0;
    if (oldest > this.lastSeq + 1) {
      this.reloadAll();
      return;
    }
    // Per memo: its catalog row is reloaded; its chunks only under the models whose chunks changed
    // (a catalog-only change, such as a summary or tags, leaves the vectors in memory alone), and
    // of those only the range of indices that changed (one range spanning them all).
    const memos = new Map<string, Map<string, ChunkRange>>();
    const models = new Set<string>();
    for (const change of this.stmts.changesSince.iterate(this.lastSeq)) {
      this.lastSeq = change.seq;
      if (change.memo_id === '' && change.model) {
        models.add(change.model);
        continue;
      }
      let chunked = memos.get(change.memo_id);
      if (!chunked) memos.set(change.memo_id, (chunked = new Map()));
      if (change.model === null) continue;
      const range = change.from_idx === null ? ALL_CHUNKS : { from: change.from_idx, to: change.to_idx ?? Infinity };
      chunked.set(change.model, spanning(chunked.get(change.model), range) ?? range);
    }
    for (const model of models) {
      const memory = this.models.get(model);
      const stored = this.stmts.model.get(model);
      if (!stored) {
        memory?.dispose();
        this.models.delete(model);
      }
      else if (memory) this.loadModel(model, stored.dimension);
    }
    for (const [memoId, chunked] of memos) {
      const row = this.stmts.catalogRow.get(memoId);
      if (row) this.syncCatalogRow(row);
      if (chunked.size === 0) continue;
      for (const [model, memory] of this.models) {
        const range = spanning(chunked.get(model), chunked.get(ALL_MODELS));
        if (!range) continue;
        const started = performance.now();
        const whole = range.from === 0 && range.to === Infinity;
        if (whole) memory.removeMemo(memoId);
        else memory.removeMemo(memoId, range.from, range.to);
        let rows = 0;
        for (const row of whole ? this.stmts.chunksOfMemo.iterate(memoId, model) : this.stmts.chunksOfMemoBetween.iterate(memoId, model, range.from, range.to)) {
          this.addRow(memory, row);
          rows += 1;
        }
        // (what a slice of writing budgets for its reload; see turnSpent)
        if (rows >= 4) this.reloadMsPerRow = 0.75 * this.reloadMsPerRow + 0.25 * Math.min(2, (performance.now() - started) / rows);
      }
    }
  }

  /**
   * The items in order, in transactions of about `WRITE_TURN_MS` each (with the reloading of what
   * they wrote), with a turn of the event loop between two (where searches that arrived meanwhile
   * are answered). `step` writes what it can of an item before `until` (a `performance.now()`
   * time), and returns the item's result, or UNFINISHED to go on with it in the next transaction.
   * Each step checks its item against the store as it is then, so one the catalog moved past while
   * the batch waited is dropped as it would be alone.
   */
  private async writeInTurns<T, R>(items: readonly T[], step: (item: T, until: number) => R | typeof UNFINISHED): Promise<R[]> {
    const budget = this.options.writeTurnMs ?? WRITE_TURN_MS;
    const out: R[] = [];
    for (let first = true; out.length < items.length; first = false) {
      if (!first) await nextTurn();
      this.write(() => {
        const until = performance.now() + budget;
        do {
          const result = step(items[out.length]!, until);
          if (result === UNFINISHED) return;
          out.push(result);
        } while (out.length < items.length && !this.turnSpent(until));
      });
    }
    return out;
  }

  /** Chunk rows written in the transaction under way (each to be reloaded into memory after it). */
  private rowsInTransaction = 0;
  /**
   * Milliseconds reloading one chunk row into memory takes after its transaction (reading it,
   * inflating its text, decoding, adding it to postings and codes): measured by sync, smoothed;
   * ~0.1-0.2 ms on a slow machine.
   */
  private reloadMsPerRow = 0.2;

  /** Whether a transaction's slice of the turn is spent: its writing so far, and the reloading to come. */
  private turnSpent(until: number): boolean {
    return performance.now() + this.rowsInTransaction * this.reloadMsPerRow >= until;
  }

  private write<T>(fn: () => T): T {
    this.rowsInTransaction = 0;
    try {
      const result = inTransaction(this.db, fn, { immediate: true });
      this.dirty = true;
      if (++this.writes % 1000 === 0) this.stmts.prune.run(Date.now() - CHANGE_RETENTION_MS);
      this.sync();
      return result;
    } finally {
      this.attributesWritten.clear();
    }
  }

  /**
   * The attributes JSON this process wrote in the transaction under way, by memo, with the version
   * written: the sync after it reads them from here instead of inflating the rows it just wrote.
   */
  private readonly attributesWritten = new Map<string, { version: number; json: string }>();

  /**
   * A live catalog row's attributes. A version is written once, with one set of attributes, so the
   * copy in memory or the one just written stands for the row when its version is the row's:
   * inflating it again (~20-40 µs, several times per memo as its events arrive) is only for rows
   * written by other processes.
   */
  private attributesOf(row: CatalogRow, memo: string | Buffer): MemoAttributes {
    const known = this.catalog.entries.get(row.memo_id);
    if (known?.memo && known.version === row.version) return known.memo;
    const written = this.attributesWritten.get(row.memo_id);
    return rowAttributes(row, written?.version === row.version ? written.json : memo);
  }

  /** The catalog in memory after a row changed (unless it holds that version already). */
  private syncCatalogRow(row: CatalogRow): void {
    const known = this.catalog.entries.get(row.memo_id);
    if (known && known.version === row.version && (known.memo === null) === (row.memo === null)) return;
    this.catalog.set(toEntry(row, (r, memo) => this.attributesOf(r, memo)));
  }

  private catalogWrite(update: CatalogUpdate): boolean {
    const row = this.stmts.catalogRow.get(update.memoId);
    if (row && row.version >= update.version) return false;
    if (row && row.memo === null) return false; // deleted for good
    const previous = row?.memo ? this.attributesOf(row, row.memo) : null;
    let memo: string | Buffer | null = null;
    if (update.memo) {
      const compact = this.options.compact !== false;
      const json = attributesJson(update.memo, compact);
      memo = compact ? compressText(json) : json;
      this.attributesWritten.set(update.memoId, { version: update.version, json });
    }
    this.stmts.upsertCatalog.run(update.memoId, update.projectId, update.version, memo);
    // A deletion or a new revision removes chunks; any other change is to attributes alone.
    let chunksRemoved = false;
    if (update.memo === null) {
      this.stmts.deleteMemoChunks.run(update.memoId);
      chunksRemoved = true;
    } else if (previous && update.memo.revision > previous.revision) {
      this.stmts.deleteOlderRevisions.run(update.memoId, update.memo.revision);
      chunksRemoved = true;
    }
    this.stmts.logChange.run(update.memoId, chunksRemoved ? ALL_MODELS : null, Date.now());
    return true;
  }

  async applyCatalog(update: CatalogUpdate): Promise<boolean> {
    return (await this.applyCatalogs([update]))[0]!;
  }

  /** In order, in slices (see `writeInTurns`). */
  async applyCatalogs(updates: readonly CatalogUpdate[]): Promise<boolean[]> {
    if (updates.length === 0) return [];
    const applied = await this.writeInTurns(updates, (u) => this.catalogWrite(u));
    // An erased memo's chunk text and attributes: zeroed in the file (secure_delete), and gone from the WAL.
    if (updates.some((u, i) => applied[i] && u.memo === null)) checkpointAfterErase(this.db);
    return applied;
  }

  async getCatalog(memoId: string): Promise<CatalogEntry | undefined> {
    this.sync();
    return this.catalog.entries.get(memoId);
  }

  async openModel(model: string, dimension: number): Promise<void> {
    const stored = this.stmts.model.get(model);
    if (stored && stored.dimension !== dimension) {
      throw new Error(`model ${model} is stored with dimension ${stored.dimension}, not ${dimension}`);
    }
    if (!stored) {
      this.write(() => {
        this.stmts.insertModel.run(model, dimension);
        this.stmts.logChange.run('', model, Date.now());
      });
    }
    if (!this.models.has(model)) this.loadModel(model, dimension);
  }

  /** Whether chunks of this memo revision may be written: the memo is not deleted, nor at a newer revision. */
  private mayWriteChunks(memo: { memoId: string; revision: number }): boolean {
    const row = this.stmts.catalogRow.get(memo.memoId);
    if (!row) return true;
    return row.memo !== null && this.attributesOf(row, row.memo).revision <= memo.revision;
  }

  /**
   * Writes a memo's chunks under a model, as many as fit before each step's `until`: each step
   * replaces chunks in place (same ids) and logs their range of indices, so the memo stays
   * findable while a large one is rewritten (a new title, say) and other processes reload only
   * that range; the last step removes what the new chunks did not replace. False when the memo was
   * deleted or moved to a newer revision (before or between steps: what was written goes with it).
   */
  private chunksWriter(model: string, memo: { memoId: string; projectId: string; revision: number }, chunks: readonly EncodedChunk[]) {
    let next = 0;
    return (until: number): boolean | typeof UNFINISHED => {
      if (!this.models.has(model)) throw new Error(`model ${model} is not open`);
      if (!this.mayWriteChunks(memo)) return false;
      const from = next;
      while (next < chunks.length) {
        const c = chunks[next++]!;
        this.stmts.insertChunk.run({ model, memo_id: memo.memoId, project_id: memo.projectId, revision: memo.revision, ...c });
        this.rowsInTransaction += 1;
        if (this.turnSpent(until)) break;
      }
      if (next > from) this.stmts.logChunkRange.run(memo.memoId, model, Date.now(), from, next);
      if (next < chunks.length) return UNFINISHED;
      if (this.stmts.deleteLeftoverChunks.run(memo.memoId, model, memo.revision, chunks.length).changes > 0) {
        this.stmts.logChange.run(memo.memoId, model, Date.now());
      }
      return true;
    };
  }

  /** A chunk's columns as stored (deflated text, float16 vector, varint terms; or as earlier versions wrote them). */
  private encodeChunk(c: IndexedChunk): EncodedChunk {
    const compact = this.options.compact !== false;
    return {
      chunk_id: c.chunkId,
      idx: c.index,
      content: compact ? compressText(c.content) : c.content,
      dense: encodeDense(c.dense, compact),
      terms: encodeTerms(c.terms, compact),
    };
  }

  async putChunks(
    model: string,
    memo: { memoId: string; projectId: string; revision: number },
    chunks: readonly IndexedChunk[],
  ): Promise<boolean> {
    return (await this.putChunksOfMemos(model, [{ memo, chunks }]))[0]!;
  }

  /**
   * The rows are encoded first (in turns: deflate and the vector and term encodings are most of a
   * write), then written in slices (see `writeInTurns`; a large memo's chunks across several).
   */
  async putChunksOfMemos(model: string, items: readonly ChunksOfMemo[]): Promise<boolean[]> {
    if (!this.models.has(model)) throw new Error(`model ${model} is not open`);
    const encoded = await mapInTurns(
      items.flatMap(({ chunks }) => chunks),
      (c) => this.encodeChunk(c),
    );
    let at = 0;
    const writers = items.map(({ memo, chunks }) => this.chunksWriter(model, memo, encoded.slice(at, (at += chunks.length))));
    return this.writeInTurns(writers, (write, until) => write(until));
  }

  async getChunks(model: string, memoId: string): Promise<StoredChunkText[]> {
    return this.stmts.chunksOfMemo
      .all(memoId, model)
      .map((row) => ({ chunkId: row.chunk_id, revision: row.revision, index: row.idx, content: decompressText(row.content) }));
  }

  /** The in-memory side of a model, up to date (for benchmarks that time one ranking alone). */
  modelMemory(model: string): { memory: ModelMemory; catalog: CatalogMemory } | undefined {
    const memory = this.memory(model);
    return memory ? { memory, catalog: this.catalog } : undefined;
  }

  private memory(model: string): ModelMemory | undefined {
    this.sync();
    return this.models.get(model);
  }

  async searchDense(model: string, vector: Float32Array, query: CandidateQuery): Promise<ChunkCandidate[]> {
    const memory = this.memory(model);
    if (!memory) return [];
    return memory.searchDenseAsync(vector, this.catalog.eligible(query.projectId, query.filters), query.limit, this.catalog, query.projectId, query.exactTop);
  }

  async searchSparse(model: string, vector: SparseVector, query: CandidateQuery): Promise<ChunkCandidate[]> {
    const memory = this.memory(model);
    if (!memory) return [];
    return memory.searchSparse(vector, query.projectId, this.catalog.eligible(query.projectId, query.filters), query.limit, this.catalog);
  }

  async countChunks(model: string, projectId?: string): Promise<number> {
    const memory = this.memory(model);
    if (!memory) return 0;
    if (projectId !== undefined) return memory.count(this.catalog.eligible(projectId, []));
    const projects = new Set([...this.catalog.entries.values()].map((e) => e.projectId));
    let n = 0;
    for (const p of projects) n += memory.count(this.catalog.eligible(p, []));
    return n;
  }

  async dropModel(model: string): Promise<void> {
    this.write(() => {
      this.stmts.deleteModelChunks.run(model);
      this.stmts.deleteModel.run(model);
      this.stmts.logChange.run('', model, Date.now());
    });
    this.models.get(model)?.dispose();
    this.models.delete(model);
    this.graphs?.removeModel(model);
  }

  /** Resolves once no HNSW graph is being built in the background. */
  async graphsBuilt(): Promise<void> {
    await Promise.all([...this.models.values()].map((m) => m.graphsBuilt()));
  }

  /** Saves the graphs that changed, so the next start loads them, and closes the file. */
  async close(): Promise<void> {
    if (!this.db.open) return;
    this.saveGraphs();
    for (const memory of this.models.values()) memory.dispose();
    this.spareCpu?.stop();
    await this.scanThread?.close();
    this.db.close();
  }
}
