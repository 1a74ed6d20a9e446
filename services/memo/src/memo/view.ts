import type { Memo, MemoAttributes } from '@memex/contracts';
import { isPending, type MemoData, type MemoState } from './decider';

/** The memo as GET returns it (spec 2.1). */
export function toMemo(memo: MemoData): Memo {
  return {
    uuid: memo.memoId,
    created_at: memo.createdAt,
    updated_at: memo.updatedAt,
    title: memo.title,
    content: memo.content,
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
    chunks: memo.chunks.map((c) => ({ uuid: c.uuid, chunk_content: memo.content.slice(c.start, c.end), chunk_index: c.index })),
    processing_error: memo.processingError,
  };
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
