import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Streams, startsContentRevision, type ContentRef } from '@memex/contracts';
import { decodeMemoEvent, isKeyErased, openEvent, type ContentStore, type IndexState, type IndexStateStore, type Logger } from '@memex/runtime';
import type { ChunkOptions } from '@memex/text';
import { chunkMemo, embedChunks } from '../processing/chunks';
import { readContent } from '../processing/processor';
import type { SearchIndex } from '../searchIndex/port';
import type { Embedder } from '../embedding/embedder';
import type { ModelSet } from './models';

/** An owner that has not beaten its heart for this long is presumed dead; another instance takes over. */
export const REINDEX_OWNER_TIMEOUT_MS = 30_000;
const HEARTBEAT_MS = 5_000;
const SWITCH_GRACE_MS = 3_000;

export interface ReindexerDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  index: SearchIndex;
  models: ModelSet;
  store: IndexStateStore;
  chunking: ChunkOptions;
  content: ContentStore;
  instance: string;
  logger: Logger;
  clock?: () => number;
}

/**
 * Rebuilds the index under a new model by replaying the memo event log (the bus keeps it whole),
 * while the old model keeps serving. One instance owns the job; when its replay reaches the end of
 * the log it switches the active model in one compare-and-set and drops the old model's chunks.
 * Meanwhile every instance writes new chunks under both models, so nothing slips past the switch.
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
    if (job.model === state.activeModel) {
      // Nothing to rebuild: the index already serves that model. Done at once, so it never waits forever.
      await this.deps.store.update((s) => (s?.reindex?.model === s?.activeModel && s?.reindex ? { activeModel: s.activeModel } : undefined));
      this.deps.logger.info({ model: job.model }, 're-index to the active model: nothing to do');
      return;
    }
    const alive = job.owner !== undefined && job.heartbeatAt !== undefined && this.now() - Date.parse(job.heartbeatAt) < REINDEX_OWNER_TIMEOUT_MS;
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
    const { js, jsm, index, models, store, chunking, logger, instance } = this.deps;
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
    const total = (await jsm.streams.info(Streams.memoEvents)).state.last_seq;
    let replayed = 0;
    logger.info({ model, previous, total }, 're-index started: replaying the memo event log');
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
      if (total > 0) {
        const consumer = await js.consumers.get(Streams.memoEvents, { deliver_policy: DeliverPolicy.All });
        const messages = await consumer.consume({ max_messages: 256 });
        for await (const msg of messages) {
          // close() without awaiting: its promise settles with the iterator, which we are leaving.
          if (this.stopped) {
            void messages.close();
            return;
          }
          replayed += 1;
          const sealedEvent = decodeMemoEvent(msg.data, msg.headers);
          if (sealedEvent.type === 'MemoCreated' || sealedEvent.type === 'MemoContentChanged') {
            // An erased memo's events no longer open: nothing to index.
            const opened = await openEvent(this.deps.content.keyring, sealedEvent).catch((error: unknown) => {
              if (isKeyErased(error)) return undefined;
              throw error;
            });
            // An upload's empty first revision waits for its extracted text.
            const event = opened && startsContentRevision(opened) ? opened : undefined;
            const { memoId, projectId, revision, content: ref } = (event?.data ?? {}) as {
              memoId: string;
              projectId: string;
              revision: number;
              content: ContentRef;
            };
            const entry = event ? await index.getCatalog(memoId) : undefined;
            // Only the revision the catalog holds now is worth embedding; older ones are dropped anyway.
            const content = event && (!entry || (entry.memo !== null && entry.memo.revision === revision))
              ? await readContent(this.deps.content, projectId, memoId, ref)
              : undefined;
            if (event && content !== undefined) {
              const chunks = chunkMemo(memoId, revision, content, chunking);
              const title = entry?.memo?.title ?? event.memo?.title ?? '';
              await index.putChunks(model, { memoId, projectId, revision }, await embedChunks(embedder, title, chunks));
            }
          }
          if (msg.info.pending === 0 || msg.seq >= total) {
            void messages.close();
            break;
          }
        }
      }
      const switched = await store.update((s) =>
        s?.reindex?.model === model && s.reindex.owner === instance ? { activeModel: model } : undefined,
      );
      if (switched?.activeModel !== model) {
        logger.warn({ model }, 're-index finished but the job changed meanwhile; not switching');
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
