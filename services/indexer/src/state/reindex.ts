import type { NatsConnection } from '@nats-io/nats-core';
import { Subjects, startsContentRevision, type MemoEventMessage, type MemoLogReply, type MemoLogRequest } from '@memex/contracts';
import { isKeyErased, reindexOwnerSilent, openEvent, query, type ContentStore, type IndexState, type IndexStateStore, type Logger } from '@memex/runtime';
import type { ChunkOptions } from '@memex/text';
import { embedMemos } from '../processing/chunks';
import { prepareRevision } from '../processing/processor';
import type { SearchIndex } from '../searchIndex/port';
import type { Embedder } from '../embedding/port';
import type { ModelSet } from './models';

const HEARTBEAT_MS = 5_000;
const SWITCH_GRACE_MS = 3_000;
/** Events asked for per page of the memo event log (a page also stops short of `max_payload`). */
const REPLAY_PAGE = 256;

interface ReindexerDeps {
  /** Asks the memo service for its event log (`Subjects.query.memoLog`). */
  nc: NatsConnection;
  index: SearchIndex;
  /** Brings the catalog up to the replayed events (the catalog consumer's own update). */
  applyCatalogs: (events: readonly MemoEventMessage[]) => Promise<void>;
  models: ModelSet;
  store: IndexStateStore;
  chunking: ChunkOptions;
  content: ContentStore;
  instance: string;
  logger: Logger;
  clock?: () => number;
}

/**
 * Rebuilds the index under a new model by replaying the memo event log, which the memo service
 * serves in pages from its event store (the bus only carries events in flight), while the old model
 * keeps serving. One instance owns the job; when its replay reaches where the log ended as it began,
 * it switches the active model in one compare-and-set and drops the old model's chunks. Meanwhile
 * every instance writes new chunks under both models, so nothing slips past the switch.
 *
 * A rebuild (`reindex.rebuild`, the job's model the active one) replays into the active model
 * itself, catalog and chunks: how an index lost or restored from an older backup is made whole.
 */
export class Reindexer {
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: ReindexerDeps) {}

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /** Takes the job if nobody live owns it. Called on every state change and periodically. */
  async consider(state: IndexState | undefined): Promise<void> {
    const job = state?.reindex;
    if (!job || this.running || this.stopped) return;
    if (job.model === state.activeModel && !job.rebuild) {
      // Nothing to rebuild: the index already serves that model. Done at once, so it never waits forever.
      await this.deps.store.update((s) =>
        s?.reindex?.model === s?.activeModel && s?.reindex && !s.reindex.rebuild ? { activeModel: s.activeModel } : undefined,
      );
      this.deps.logger.info({ model: job.model }, 're-index to the active model: nothing to do');
      return;
    }
    const alive = job.owner !== undefined && !reindexOwnerSilent(job, this.now());
    if (alive && job.owner !== this.deps.instance) return;
    const claimed = await this.deps.store.update((current) => {
      const j = current?.reindex;
      if (!current || !j || j.model !== job.model || j.owner !== job.owner) return undefined;
      return { ...current, reindex: { ...j, owner: this.deps.instance, heartbeatAt: new Date(this.now()).toISOString() } };
    });
    if (claimed?.reindex?.owner !== this.deps.instance || claimed.reindex.model !== job.model) return;
    this.running = this.run(job.model, claimed.activeModel)
      .catch((error: unknown) => this.deps.logger.error({ err: error, model: job.model }, 're-index failed; another attempt follows'))
      .finally(() => {
        this.running = undefined;
      });
  }

  private async run(model: string, previous: string): Promise<void> {
    const { nc, index, applyCatalogs, models, store, logger, instance } = this.deps;
    const rebuild = model === previous;
    let embedder: Embedder;
    try {
      ({ embedder } = await models.forModel(model));
    } catch (error) {
      // A model that will not load will not load on the next attempt either: refuse the job, say why.
      const message = (error as Error)?.message ?? String(error);
      logger.error({ err: error, model }, 're-index refused: the model could not be loaded');
      await store.update((s) =>
        s?.reindex?.model === model && s.reindex.owner === instance
          ? { activeModel: s.activeModel, failed: { model, error: message, at: new Date(this.now()).toISOString() } }
          : undefined,
      );
      return;
    }
    const page = (after: number) =>
      query<MemoLogRequest, MemoLogReply>(nc, Subjects.query.memoLog, { after, limit: REPLAY_PAGE }, { timeoutMs: 30_000 });
    let next = await page(0);
    // The log as far as it went when the replay began; what comes after reaches every instance live.
    const total = next.head;
    let replayed = 0;
    logger.info({ model, previous, total, rebuild }, 're-index started: replaying the memo event log');
    // The model loaded and the replay starts: the CLI reports the job as accepted from here.
    await store.update((s) =>
      s?.reindex?.model === model && s.reindex.owner === instance ? { ...s, reindex: { ...s.reindex, replayed, total } } : undefined,
    );
    const beat = setInterval(() => {
      void store
        .update((s) =>
          s?.reindex?.model === model && s.reindex.owner === instance
            ? { ...s, reindex: { ...s.reindex, heartbeatAt: new Date(this.now()).toISOString(), replayed, total } }
            : undefined,
        )
        .catch((error: unknown) => logger.warn({ err: error }, 're-index heartbeat failed'));
    }, HEARTBEAT_MS);
    try {
      while (next.events.length > 0) {
        if (this.stopped) return;
        const reached = next.events.at(-1)!.position;
        // The memo service reads (and seals) the next page while this one is embedded and written.
        const following = reached >= total ? undefined : page(reached);
        following?.catch(() => undefined); // awaited below, unless this page fails first
        const opened = (
          await Promise.all(
            next.events.map(({ message }) =>
              // An erased memo's events no longer open: nothing to index (its tombstone follows).
              openEvent(this.deps.content.keyring, message).catch((error: unknown) => {
                if (isKeyErased(error)) return undefined;
                throw error;
              }),
            ),
          )
        ).filter((event): event is MemoEventMessage => event !== undefined);
        // The catalog first (version-guarded, so a no-op where it is current): a rebuild starts from none.
        await applyCatalogs(opened);
        // The page's content revisions that the catalog still holds, embedded in one call and written in one go.
        const prepared = await Promise.all(opened.filter((event) => startsContentRevision(event)).map((event) => prepareRevision(this.deps, event)));
        const todo = prepared.filter((p) => p !== undefined);
        if (todo.length > 0) {
          const embedded = await embedMemos(embedder, todo);
          await index.putChunksOfMemos(
            model,
            todo.map(({ memoId, projectId, revision }, i) => ({ memo: { memoId, projectId, revision }, chunks: embedded[i]! })),
          );
        }
        replayed = Math.min(reached, total);
        if (!following) break;
        next = await following;
      }
      replayed = total;
      const switched = await store.update((s) =>
        s?.reindex?.model === model && s.reindex.owner === instance ? { activeModel: model } : undefined,
      );
      if (switched?.activeModel !== model) {
        logger.warn({ model }, 're-index finished but the job changed meanwhile; not switching');
        return;
      }
      if (rebuild) {
        logger.info({ model, replayed }, 'rebuild complete');
        return;
      }
      logger.info({ model, previous, replayed }, 're-index complete: switched the active model');
      // Other instances switch when the state reaches their watch; give in-flight searches a moment.
      await new Promise((r) => setTimeout(r, SWITCH_GRACE_MS));
      if (previous === model) return;
      // A switch back to the previous model may have been asked for during the grace: then its
      // chunks are being rebuilt and must stay. The shared state says so for every instance; this
      // instance's model set says so for the index it has (re)opened.
      const { state: now } = await store.read();
      if (now?.activeModel === previous || now?.reindex?.model === previous) {
        logger.info({ model: previous }, 're-index: the previous model is wanted again; its chunks stay');
        return;
      }
      if (!(await models.drop(previous))) logger.info({ model: previous }, 're-index: the previous model is in use again; its chunks stay');
    } finally {
      clearInterval(beat);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
