import { EMPTY_CHUNKS, type MemoAttributes, type MemoView } from '@memex/contracts';
import type { StoredEvent } from '../eventStore/port';
import { evolve, initialState, isPending, toDomainEvents, type MemoData, type MemoState } from './decider';

/**
 * The memo as the read model keeps it and GET's query answers: the spec's memo (2.1) with the
 * content by reference and chunks as a layout; the gateway fills in the text.
 */
export function toMemo(memo: MemoData): MemoView {
  const chunked = memo.chunkedRevision === memo.revision;
  return {
    uuid: memo.memoId,
    created_at: memo.createdAt,
    updated_at: memo.updatedAt,
    title: memo.title,
    content_ref: memo.content,
    summary: memo.summary,
    content_length: memo.content.length,
    metadata: memo.metadata,
    client_reference_id: memo.clientReferenceId,
    source: memo.source,
    type: memo.memoType,
    expiration_date: memo.expirationDate,
    archived: memo.archived,
    pending: isPending(memo),
    tags: memo.tags.map((t) => ({ uuid: t.uuid, tag: t.tag })),
    chunk_revision: memo.revision,
    chunk_layout: chunked ? memo.chunks : EMPTY_CHUNKS,
    // Kept only for content in the blob store: inline content is at hand to cut it from (see searchTitles).
    first_chunk: chunked && memo.content.inline === undefined ? memo.firstChunk : '',
    processing_error: memo.processingError,
  };
}

/**
 * The memo as the read model stores it: like `toMemo`, but inline content by the version of the
 * event that holds the very same reference (sealed bytes and digest), so the memo's text is kept
 * once (the event store has it). `events`: the stream's events with their versions, oldest first.
 */
export function toStoredMemo(memo: MemoData, events: readonly { version: number; data: unknown }[]): MemoView {
  const view = toMemo(memo);
  const { inline } = memo.content;
  if (inline === undefined) return view;
  const holder = events.findLast((e) => (e.data as { content?: { inline?: string } }).content?.inline === inline);
  if (!holder) return view;
  return { ...view, content_ref: { length: view.content_ref.length, digest: '', event: holder.version } };
}

/** What every published event carries for projections (see `MemoEventMessage.memo`). */
export function toAttributes(state: MemoState): MemoAttributes | null {
  if (state.status !== 'active') return null;
  const m = state.memo;
  return {
    projectId: m.projectId,
    memoId: m.memoId,
    revision: m.revision,
    title: m.title,
    summary: m.summary,
    source: m.source,
    clientReferenceId: m.clientReferenceId,
    memoType: m.memoType,
    tags: m.tags.map((t) => t.tag),
    metadata: m.metadata,
    archived: m.archived,
    expirationDate: m.expirationDate,
  };
}

/** The snapshot after each of a stream's events, in order: what each one goes out with. */
export function attributesAfterEach(events: readonly StoredEvent[]): (MemoAttributes | null)[] {
  let state = initialState();
  return toDomainEvents(events).map((event) => toAttributes((state = evolve(state, event))));
}
