import type { GraphFiles } from './graphFiles';
import type { SavedGraph } from './graph';
import type { ModelMemory } from './model';
import type { Statements } from './schema';

/**
 * The HNSW graphs of an embedded index's file saved beside it (GraphFiles), and whether one read
 * back still fits the index: saved from this file, with these settings, and with every change
 * since still in the change log (their memos are then replaced in it).
 */
export class SavedGraphs {
  constructor(
    private readonly files: GraphFiles,
    private readonly instance: string,
    private readonly stmts: Statements,
  ) {}

  /**
   * A project's saved graph, if it was saved from this file, with settings like these, and the
   * change log still holds every change since (their memos are then replaced in it); else why not.
   */
  load(model: string, memory: ModelMemory, projectId: string): SavedGraph | { reason: string } {
    let loaded: ReturnType<GraphFiles['load']>;
    try {
      loaded = this.files.load(model, projectId, { instance: this.instance, dimension: memory.dimension, dense: memory.denseOptions });
    } catch (error) {
      return { reason: `unreadable: ${(error as Error).message}` }; // (usearch refuses a file of another format version, say)
    }
    if ('reason' in loaded) return loaded;
    const { seq } = loaded.meta;
    const newest = this.stmts.maxSeq.get()?.s ?? 0;
    const oldest = this.stmts.minSeq.get()?.s ?? 0;
    if (seq > newest) return { reason: 'saved after the last change this file knows' };
    if (seq < newest && oldest > seq + 1) return { reason: 'the change log no longer reaches back to it' };
    const changedMemos = new Set<string>();
    for (const change of this.stmts.changedSince.iterate(seq)) {
      if (change.memo_id === '') {
        if (change.model === model) return { reason: 'the model was reset since' };
      } else changedMemos.add(change.memo_id);
    }
    return { index: loaded.index, chunkIds: loaded.chunkIds, changedMemos };
  }

  /** Saves a project's graph as of change `seq`; a failure only costs a rebuild later. */
  save(model: string, memory: ModelMemory, projectId: string, seq: number): void {
    const snapshot = memory.graphSnapshot(projectId);
    if (!snapshot) return;
    const { connectivity, expansionAdd } = memory.denseOptions;
    try {
      this.files.save(
        { instance: this.instance, model, projectId, dimension: memory.dimension, connectivity, expansionAdd, seq, count: snapshot.count },
        snapshot.index,
        snapshot.chunkIds,
      );
      memory.graphSaved(projectId);
    } catch {
      // (a full disk, say): the graph in memory is unaffected
    }
  }

  removeModel(model: string): void {
    this.files.removeModel(model);
  }
}
