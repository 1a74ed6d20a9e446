/**
 * The memo catalog queries: the paged list, processing status, history and the original file's
 * whereabouts. Like GET, a memo of another project is "not found" and reveals nothing.
 */
import {
  MemexError,
  type Memo,
  type MemoAddressRequest,
  type MemoEvent,
  type MemoFileReply,
  type MemoHistoryEntry,
  type MemoHistoryReply,
  type MemoListReply,
  type MemoListRequest,
  type MemoStatusReply,
  type ProcessingStatus,
} from '@memex/contracts';
import type { StoredEvent } from '../eventStore/port';
import type { MemoReadModel } from '../readModel/port';
import { isPending, type MemoData } from './decider';
import type { MemoCommandService } from './handlers';

/** The status a list item shows, from the memo as GET returns it. */
function processingStatus(memo: Pick<Memo, 'pending' | 'processing_error'>): ProcessingStatus {
  if (memo.processing_error) return 'error';
  return memo.pending ? 'processing' : 'processed';
}

export async function listMemos(readModel: MemoReadModel, request: MemoListRequest): Promise<MemoListReply> {
  const { projectId, page, pageSize, filters } = request;
  const { records, count } = await readModel.listMemos(projectId, { filters, offset: (page - 1) * pageSize, limit: pageSize });
  return {
    results: records.map(({ memo }) => ({
      uuid: memo.uuid,
      created_at: memo.created_at,
      updated_at: memo.updated_at,
      title: memo.title,
      summary: memo.summary,
      content_length: memo.content_length,
      metadata: memo.metadata,
      client_reference_id: memo.client_reference_id,
      processing_status: processingStatus(memo),
    })),
    count,
    page,
    page_size: pageSize,
    total_pages: Math.ceil(count / pageSize),
  };
}

/** The memo's state from its event stream, for the caller's project only. */
async function ownMemo(commands: MemoCommandService, request: MemoAddressRequest): Promise<{ memo: MemoData; events: StoredEvent[] }> {
  const { memoId, ownerProjectId } = await commands.resolve(request.projectId, request.ref, request.space);
  if (ownerProjectId !== request.projectId) throw new MemexError('MemoNotFound');
  const { state, events } = await commands.load(ownerProjectId, memoId);
  if (state.status !== 'active') throw new MemexError('MemoNotFound');
  return { memo: state.memo, events };
}

export function statusOf(memo: MemoData): MemoStatusReply {
  const error = memo.processingError;
  const pending = isPending(memo);
  const completed = [memo.chunkedAt, memo.summarizedAt].filter((t): t is string => t !== null).sort().pop() ?? null;
  return {
    memo_uuid: memo.memoId,
    status: error ? 'error' : pending ? 'processing' : 'processed',
    processing_started_at: memo.processingStartedAt,
    processing_completed_at: error ? error.at : pending ? null : completed,
    error_reason: error ? `${error.stage}: ${error.message}` : null,
    summary_source: memo.summarizedRevision === memo.revision ? memo.summarySource : null,
    summary_reason: memo.summarizedRevision === memo.revision ? memo.summaryReason : null,
  };
}

export async function memoStatus(commands: MemoCommandService, request: MemoAddressRequest): Promise<MemoStatusReply> {
  return statusOf((await ownMemo(commands, request)).memo);
}

/** REST names of the memo fields an `MemoUpdated` change set touches. */
const CHANGE_FIELDS: Record<string, string> = {
  title: 'title',
  metadata: 'metadata',
  clientReferenceId: 'client_reference_id',
  source: 'source',
  memoType: 'type',
  expirationDate: 'expiration_date',
};

function historyEntry(stored: StoredEvent): MemoHistoryEntry {
  const event = { type: stored.type, data: stored.data } as MemoEvent;
  const base = {
    version: stored.version,
    event: event.type,
    at: stored.occurredAt,
    request_id: stored.meta.requestId ?? null,
    content_revision: null as number | null,
    content_length: null as number | null,
  };
  switch (event.type) {
    case 'MemoCreated': {
      const d = event.data;
      const fields = ['title', 'content', 'type', 'metadata', 'tags'];
      if (d.clientReferenceId !== null) fields.push('client_reference_id');
      if (d.source !== null) fields.push('source');
      if (d.expirationDate !== null) fields.push('expiration_date');
      if (d.file) fields.push('file');
      return { ...base, actor: 'client', fields, content_revision: d.revision, content_length: d.content.length };
    }
    case 'MemoUpdated':
      return { ...base, actor: 'client', fields: Object.keys(event.data.changes).map((k) => CHANGE_FIELDS[k] ?? k) };
    case 'MemoContentChanged':
      return {
        ...base,
        actor: event.data.origin === 'extraction' ? 'extractor' : 'client',
        fields: ['content'],
        content_revision: event.data.revision,
        content_length: event.data.content.length,
      };
    case 'MemoChunked':
      return { ...base, actor: 'indexer', fields: ['chunks'], content_revision: event.data.revision };
    case 'MemoSummarized': {
      const { source, reason, tags, revision } = event.data;
      return {
        ...base,
        actor: 'agent',
        fields: tags ? ['summary', 'tags'] : ['summary'],
        content_revision: revision,
        ...(source ? { summary_source: source } : {}),
        ...(reason ? { summary_reason: reason } : {}),
      };
    }
    case 'MemoTagged':
      return { ...base, actor: 'agent', fields: ['tags'], content_revision: event.data.revision };
    case 'MemoProcessingFailed': {
      const actor = event.data.stage === 'extracting' ? 'extractor' : event.data.stage === 'indexing' ? 'indexer' : 'agent';
      return { ...base, actor, fields: ['processing_error'], content_revision: event.data.revision };
    }
    case 'MemoArchived':
      return { ...base, actor: 'expiry', fields: ['archived'] };
    case 'MemoUnarchived':
      return { ...base, actor: 'client', fields: ['archived'] };
    case 'MemoDeleted':
      return { ...base, actor: 'client', fields: [] };
    default: {
      const never: never = event;
      throw new Error(`unknown event ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Every event of the memo, oldest first: what changed, who caused it, when, and for content only
 * its revision and length. An erased memo has no history: its stream holds only the tombstone,
 * and it is not found.
 */
export async function memoHistory(commands: MemoCommandService, request: MemoAddressRequest): Promise<MemoHistoryReply> {
  const { memo, events } = await ownMemo(commands, request);
  return { memo_uuid: memo.memoId, revisions: events.map(historyEntry) };
}

export async function memoFile(commands: MemoCommandService, request: MemoAddressRequest): Promise<MemoFileReply> {
  const { memo } = await ownMemo(commands, request);
  if (!memo.file) throw new MemexError('NoOriginalFile');
  return { memoId: memo.memoId, file: memo.file };
}
