import type { FeedEventBody, FeedUpdateField, MemoEvent, MemoEventMessage, MemoEventType } from '@memex/contracts';

/** The memo events the feed is made of; the others are acknowledged unopened. */
export const FEED_SOURCE_TYPES: readonly MemoEventType[] = [
  'MemoCreated',
  'MemoUpdated',
  'MemoContentChanged',
  'MemoChunked',
  'MemoSummarized',
  'MemoProcessingFailed',
  'MemoDeleted',
];

type Changes = Extract<MemoEvent, { type: 'MemoUpdated' }>['data']['changes'];

/** Internal change names → the REST API's field names. */
const FIELD_NAMES: Record<keyof Changes, FeedUpdateField> = {
  title: 'title',
  metadata: 'metadata',
  clientReferenceId: 'client_reference_id',
  source: 'source',
  memoType: 'type',
  expirationDate: 'expiration_date',
};

/**
 * The public event an (opened) memo event stands for, or undefined when it stands for none.
 * `completesRevision`: the event made its revision ready (chunks and summary both recorded), which
 * only the memo's stream can tell; asked only for `MemoChunked` and `MemoSummarized`.
 */
export async function feedEventOf(
  event: MemoEventMessage,
  completesRevision: () => Promise<boolean>,
): Promise<FeedEventBody | undefined> {
  const data = event.data as { memoId: string; projectId: string; revision?: number };
  const base = {
    at: event.occurredAt,
    project_id: data.projectId,
    memo_uuid: data.memoId,
    client_reference_id: event.memo?.clientReferenceId ?? null,
    revision: event.memo?.revision ?? data.revision ?? null,
  };
  switch (event.type) {
    case 'MemoCreated':
      return { type: 'memo.created', ...base };
    case 'MemoUpdated': {
      const changes = (event.data as Extract<MemoEvent, { type: 'MemoUpdated' }>['data']).changes;
      const fields = (Object.keys(changes) as (keyof Changes)[]).map((k) => FIELD_NAMES[k]).filter((f) => f !== undefined);
      return fields.length > 0 ? { type: 'memo.updated', ...base, fields } : undefined;
    }
    case 'MemoContentChanged': {
      // Text extracted from an upload is the memo's first content, not a change a client made.
      const origin = (event.data as Extract<MemoEvent, { type: 'MemoContentChanged' }>['data']).origin;
      return origin === 'extraction' ? undefined : { type: 'memo.updated', ...base, fields: ['content'] };
    }
    case 'MemoChunked':
    case 'MemoSummarized':
      return (await completesRevision()) ? { type: 'memo.processed', ...base, revision: data.revision ?? base.revision } : undefined;
    case 'MemoProcessingFailed': {
      const failed = event.data as Extract<MemoEvent, { type: 'MemoProcessingFailed' }>['data'];
      return { type: 'memo.failed', ...base, revision: failed.revision, stage: failed.stage, reason: failed.message };
    }
    case 'MemoDeleted': {
      const reason = (event.data as Extract<MemoEvent, { type: 'MemoDeleted' }>['data']).reason;
      // The tombstone names ids only; what the memo's reference id was is erased with it.
      return { type: reason === 'expired' ? 'memo.expired' : 'memo.deleted', ...base, client_reference_id: null, revision: null };
    }
    default:
      return undefined;
  }
}
