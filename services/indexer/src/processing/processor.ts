import { MemexError, packChunks, startsContentRevision, type ContentRef, type MemoEventMessage } from '@memex/contracts';
import { SEAL_FOR_TRANSIT, isKeyErased, type CommandClient, type ContentStore, type Failpoints, type Logger, type Metrics } from '@memex/runtime';
import type { ChunkOptions } from '@memex/text';
import type { SearchIndex } from '../searchIndex/port';
import type { ModelSet } from '../state/models';
import { alreadyIndexed, chunkMemo, embedChunks, embedMemos, type TextChunk } from './chunks';

interface ProcessorDeps {
  index: SearchIndex;
  models: ModelSet;
  commands: CommandClient;
  content: ContentStore;
  chunking: ChunkOptions;
  logger: Logger;
  metrics?: Metrics;
  failpoint?: Failpoints;
}

/** A content revision event and the logger of its request. */
interface RevisionEvent {
  event: MemoEventMessage;
  logger?: Logger;
}

/** The memo and project an event is about (every memo event's data names both). */
function about(event: MemoEventMessage): { memoId: string; projectId: string } {
  const { memoId, projectId } = event.data as { memoId: string; projectId: string };
  return { memoId, projectId };
}

/** A content revision read and chunked, ready to embed under the title it is indexed with. */
interface PreparedRevision {
  memoId: string;
  projectId: string;
  revision: number;
  title: string;
  chunks: TextChunk[];
}

/**
 * Reads and chunks the content revision an event starts, unless the catalog (brought up to the
 * event before) has moved past it or the memo is gone: then `undefined`, nothing worth embedding.
 */
export async function prepareRevision(
  { index, content: store, chunking }: Pick<ProcessorDeps, 'index' | 'content' | 'chunking'>,
  event: MemoEventMessage,
): Promise<PreparedRevision | undefined> {
  const { memoId, projectId } = about(event);
  const { revision, content: ref } = event.data as { revision: number; content: ContentRef };
  const entry = await index.getCatalog(memoId);
  if (entry && (entry.memo === null || entry.memo.revision > revision)) return undefined;
  const content = await readContent(store, projectId, memoId, ref);
  // Replaced or erased meanwhile: whatever we computed would be dropped.
  if (content === undefined) return undefined;
  // The catalog holds the newest title, whatever order events arrive in.
  const title = entry?.memo?.title ?? event.memo?.title ?? '';
  return { memoId, projectId, revision, title, chunks: await chunkMemo(memoId, revision, content, chunking) };
}

/**
 * What the indexer does with memo events: keep the catalog (every event) and chunk + embed every
 * new content revision. Both are idempotent, and results for a revision the catalog has moved past
 * are dropped.
 */
export class MemoProcessor {
  constructor(private readonly deps: ProcessorDeps) {}

  /** The `indexer-catalog` consumer: attributes, deletions, revisions, archiving. */
  async applyCatalog(event: MemoEventMessage): Promise<void> {
    await this.applyCatalogs([event]);
  }

  /** The catalog updates of several events in order, in one write. */
  async applyCatalogs(events: readonly MemoEventMessage[]): Promise<void> {
    await this.deps.index.applyCatalogs(
      events.map((event) => {
        const { memoId, projectId } = about(event);
        return { memoId, projectId, version: event.version, memo: event.memo };
      }),
    );
  }

  /**
   * The `indexer` consumer: chunks and embeddings of the content revisions among `events`, as many
   * memos at once: one catalog write, one embedder call per model, one index write per model, then
   * one `record-chunks-batch` telling the memo service of every stored revision. Resolves to one
   * entry per event, in order: `undefined` when done, the error when the memo service refused its
   * chunks (that event alone is retried).
   */
  async indexContents(events: readonly RevisionEvent[]): Promise<(Error | undefined)[]> {
    const { index, models, commands } = this.deps;
    const outcomes: (Error | undefined)[] = events.map(() => undefined);
    const revisions = events.flatMap(({ event, logger }, at) => (startsContentRevision(event) ? [{ event, logger, at }] : []));
    if (revisions.length === 0) return outcomes;
    // Keep the catalog at least as new as these events, so the chunks become findable at once.
    await this.applyCatalogs(revisions.map(({ event }) => event));
    const prepared: (PreparedRevision & { logger: Logger; at: number })[] = [];
    const read = await Promise.all(
      revisions.map(async ({ event, logger = this.deps.logger, at }) => {
        const revision = await prepareRevision(this.deps, event);
        return revision && { ...revision, logger, at };
      }),
    );
    for (const r of read) if (r) prepared.push(r);
    if (prepared.length === 0) return outcomes;

    let storedUnderActive: boolean[] = [];
    const targets = await models.writeTargets();
    for (const [i, { model, embedder }] of targets.entries()) {
      // A redelivered revision already stored under this model (its first run outlasted the ack
      // wait, or crashed before acknowledging) is not embedded and written again.
      const done = await Promise.all(prepared.map((p) => alreadyIndexed(index, model, p.memoId, p.chunks)));
      const todo = prepared.filter((_, j) => !done[j]);
      const embedded = await embedMemos(embedder, todo);
      const written = await index.putChunksOfMemos(
        model,
        todo.map((p, j) => ({ memo: { memoId: p.memoId, projectId: p.projectId, revision: p.revision }, chunks: embedded[j]! })),
      );
      let w = 0;
      const stored = done.map((already) => already || written[w++] === true);
      if (i === 0) storedUnderActive = stored;
    }
    const revisionsIndexed = this.deps.metrics?.counter('memex_revisions_indexed_total', 'Memo content revisions chunked and embedded');
    const chunksIndexed = this.deps.metrics?.counter('memex_chunks_indexed_total', 'Chunks embedded and stored');
    const recorded = await Promise.all(
      prepared.map(async ({ memoId, projectId, revision, chunks, logger, at }, j) => {
        const stored = storedUnderActive[j] === true;
        revisionsIndexed?.inc({ stored: String(stored) });
        chunksIndexed?.inc({}, stored ? chunks.length : 0);
        if (!stored) {
          logger.debug({ memoId, revision }, 'chunks dropped: the memo moved on');
          return undefined;
        }
        try {
          const sealed = await this.deps.content.keyring.sealJson(projectId, memoId, { firstChunk: chunks[0]?.content ?? '' }, SEAL_FOR_TRANSIT);
          return { at, item: { projectId, memoId, revision, model: targets[0]!.model, chunks: packChunks(chunks), sealed } };
        } catch (error) {
          if (isKeyErased(error)) return undefined;
          throw error;
        }
      }),
    );
    const items = recorded.flatMap((r) => (r ? [r] : []));
    // Tests: a crash with the batch's chunks in the index and none of them recorded.
    if (items.length > 0) this.deps.failpoint?.('indexer.before-record-chunks');
    // The request of the first event names the batch's command (each event's own stays in its logs).
    const requestId = items.map(({ at }) => (events[at]!.logger?.bindings() as { requestId?: string } | undefined)?.requestId).find(Boolean);
    const results = await commands.sendBatch(
      'record-chunks-batch',
      items.map(({ item }) => item),
      requestId ? { requestId } : {},
    );
    results.forEach((result, k) => {
      // MemoNotFound: the memo was erased meanwhile, nothing left to record.
      if (!result.ok && result.error.code !== 'MemoNotFound') outcomes[items[k]!.at] = MemexError.fromWire(result.error);
    });
    return outcomes;
  }

  /**
   * A new title changes what every chunk is indexed as (title + text): re-embed the stored chunks
   * of the current revision. Uses the catalog's title, the newest, so out-of-order title events end
   * on the right one. Chunks not stored yet get the new title when they are.
   */
  async retitle(event: MemoEventMessage): Promise<void> {
    if (event.type !== 'MemoUpdated' || (event.data as { changes: { title?: string } }).changes.title === undefined) return;
    const { index, models } = this.deps;
    const { memoId, projectId } = about(event);
    await this.applyCatalog(event);
    const memo = (await index.getCatalog(memoId))?.memo;
    if (!memo) return;
    for (const { model, embedder } of await models.writeTargets()) {
      const stored = (await index.getChunks(model, memoId)).filter((c) => c.revision === memo.revision);
      if (stored.length === 0) continue;
      await index.putChunks(model, { memoId, projectId, revision: memo.revision }, await embedChunks(embedder, memo.title, stored));
    }
  }

  /** A revision that failed every retry: the memo shows it, instead of staying pending silently. */
  async recordFailure(event: MemoEventMessage, error: unknown): Promise<void> {
    if (!startsContentRevision(event)) return;
    const { memoId, projectId } = about(event);
    const { revision } = event.data as { revision: number };
    await this.deps.commands.send('record-processing-failure', {
      projectId,
      memoId,
      revision,
      stage: 'indexing',
      message: String((error as Error)?.message ?? error).slice(0, 500),
    });
  }
}

/** A revision's text, or `undefined` when it can no longer be read (blob replaced, or key shredded). */
async function readContent(store: ContentStore, projectId: string, memoId: string, ref: ContentRef): Promise<string | undefined> {
  try {
    return await store.read(projectId, memoId, ref);
  } catch (error) {
    if (isKeyErased(error)) return undefined;
    throw error;
  }
}
