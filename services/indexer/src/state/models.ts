import type { Logger } from '@memex/runtime';
import type { Embedder } from '../embedding/port';
import type { SearchIndex } from '../searchIndex/port';
import type { IndexState } from '@memex/runtime';

interface LoadedModel {
  model: string;
  embedder: Embedder;
}

/**
 * The embedders this instance needs: the active model (queries, new chunks) and, during a re-index,
 * the target model (new chunks are written under both, so the switch loses nothing).
 */
export class ModelSet {
  private readonly loaded = new Map<string, Promise<Embedder>>();
  private activeModel: string | undefined;
  private targetModel: string | undefined;
  /** apply() and drop() run one at a time, in call order: state changes arrive faster than models load. */
  private serial: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly load: (model: string) => Promise<Embedder>,
    private readonly index: SearchIndex,
    private readonly logger: Logger,
  ) {}

  private embedder(model: string): Promise<Embedder> {
    let pending = this.loaded.get(model);
    if (!pending) {
      pending = (async () => {
        const started = Date.now();
        const embedder = await this.load(model);
        await this.index.openModel(model, embedder.dimension);
        this.logger.info({ model, dimension: embedder.dimension, loadMs: Date.now() - started }, 'embedding model loaded');
        return embedder;
      })();
      pending.catch(() => this.loaded.delete(model));
      this.loaded.set(model, pending);
    }
    return pending;
  }

  /**
   * Follows the shared index state; loads what it names, releases what it no longer does. A target
   * model that will not load is left out (the re-index owner reports it and drops the job); only the
   * active model must load.
   */
  apply(state: IndexState): Promise<void> {
    return this.inTurn(() => this.follow(state));
  }

  /**
   * Drops a model's chunks from the index once a re-index has switched away from it, unless the
   * state this instance follows needs it again (a switch back requested meanwhile has reopened it).
   * Returns whether it dropped.
   */
  drop(model: string): Promise<boolean> {
    return this.inTurn(async () => {
      if (model === this.activeModel || model === this.targetModel) return false;
      const pending = this.loaded.get(model);
      this.loaded.delete(model);
      await pending?.then((e) => e.dispose()).catch(() => undefined);
      await this.index.dropModel(model);
      return true;
    });
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.serial.then(work, work);
    this.serial = next.catch(() => undefined);
    return next;
  }

  private async follow(state: IndexState): Promise<void> {
    let target = state.reindex?.model !== state.activeModel ? state.reindex?.model : undefined;
    await this.embedder(state.activeModel);
    if (target) target = await this.embedder(target).then(() => target, () => undefined);
    this.activeModel = state.activeModel;
    this.targetModel = target;
    for (const [model, pending] of this.loaded) {
      if (model === this.activeModel || model === this.targetModel) continue;
      this.loaded.delete(model);
      void pending.then((e) => e.dispose()).catch(() => undefined);
    }
  }

  get activeName(): string {
    if (!this.activeModel) throw new Error('no active embedding model yet');
    return this.activeModel;
  }

  get targetName(): string | undefined {
    return this.targetModel;
  }

  async active(): Promise<LoadedModel> {
    const model = this.activeName;
    return { model, embedder: await this.embedder(model) };
  }

  async forModel(model: string): Promise<LoadedModel> {
    return { model, embedder: await this.embedder(model) };
  }

  /** Where new chunks go: the active model, and the re-index target if there is one. */
  async writeTargets(): Promise<LoadedModel[]> {
    const out = [await this.active()];
    if (this.targetModel) out.push(await this.forModel(this.targetModel));
    return out;
  }

  async dispose(): Promise<void> {
    for (const pending of this.loaded.values()) await pending.then((e) => e.dispose()).catch(() => undefined);
    this.loaded.clear();
  }
}
