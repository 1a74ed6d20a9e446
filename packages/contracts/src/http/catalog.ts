/**
 * The memo catalog (Skald-shaped): the paged memo list, a memo's processing status, its history.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MemexError } from '../errors';
import { parseFilters, type Filter } from '../filters';
import { DateTime, MAX_SHORT_TEXT, Nullable, Uuid } from './common';
import { Metadata } from './memo';

export const MEMO_PAGE_SIZE_DEFAULT = 20;
export const MEMO_PAGE_SIZE_MAX = 100;

export const ProcessingStatus = Type.Union([Type.Literal('processing'), Type.Literal('processed'), Type.Literal('error')], {
  description: 'processing until extraction (for files), chunks, summary and tags exist for the current content; error when a stage failed for good',
});
export type ProcessingStatus = Static<typeof ProcessingStatus>;

export const MemoListItem = Type.Object(
  {
    uuid: Uuid,
    created_at: DateTime,
    updated_at: DateTime,
    title: Type.String({ maxLength: MAX_SHORT_TEXT }),
    summary: Type.String(),
    content_length: Type.Integer({ minimum: 0 }),
    metadata: Metadata,
    client_reference_id: Nullable(Type.String()),
    processing_status: ProcessingStatus,
  },
  { $id: 'MemoListItem' },
);
export type MemoListItem = Static<typeof MemoListItem>;

export const MemoListResponse = Type.Object(
  {
    results: Type.Array(MemoListItem),
    count: Type.Integer({ minimum: 0, description: 'Memos that match, over all pages' }),
    page: Type.Integer({ minimum: 1 }),
    page_size: Type.Integer({ minimum: 1, maximum: MEMO_PAGE_SIZE_MAX }),
    total_pages: Type.Integer({ minimum: 0 }),
    next: Nullable(
      Type.String({
        description: 'The next page as an absolute path with this request\'s query and `page` one higher, e.g. `/api/v1/memo?page=3&page_size=20`; null on the last page',
      }),
    ),
    previous: Nullable(
      Type.String({
        description: 'The previous page as an absolute path with this request\'s query and `page` one lower (the last page from beyond it); null on page 1',
      }),
    ),
  },
  { $id: 'MemoListResponse' },
);
export type MemoListResponse = Static<typeof MemoListResponse>;

export const MemoListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MEMO_PAGE_SIZE_MAX, default: MEMO_PAGE_SIZE_DEFAULT })),
  filters: Type.Optional(
    Type.String({
      description: 'A JSON array of Filter objects (as in search), URL-encoded; the list holds only memos that pass all of them',
    }),
  ),
  project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })),
});
export type MemoListQuery = Static<typeof MemoListQuery>;

export const SummarySourceField = Type.Union(
  [Type.Literal('model'), Type.Literal('model-text'), Type.Literal('extractive-fallback'), Type.Literal('extractive')],
  {
    description:
      "What wrote the summary: model (its structured reply), model-text (its prose taken as the summary), extractive-fallback (the model failed; see summary_reason), extractive (the built-in provider is the configured LLM)",
  },
);

export const MemoStatusResponse = Type.Object(
  {
    memo_uuid: Uuid,
    status: ProcessingStatus,
    processing_started_at: Nullable(DateTime),
    processing_completed_at: Nullable(DateTime),
    error_reason: Nullable(Type.String()),
    summary_source: Nullable(SummarySourceField),
    summary_reason: Nullable(Type.String({ description: "Why the model's summary was not used, with extractive-fallback" })),
  },
  { $id: 'MemoStatusResponse' },
);
export type MemoStatusResponse = Static<typeof MemoStatusResponse>;

export const MemoHistoryEntry = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'Position in the memo event stream' }),
    event: Type.String({ description: 'What happened, e.g. MemoCreated, MemoUpdated, MemoContentChanged, MemoChunked' }),
    at: DateTime,
    actor: Type.Union(
      [Type.Literal('client'), Type.Literal('extractor'), Type.Literal('indexer'), Type.Literal('agent'), Type.Literal('expiry')],
      { description: 'Who caused it: the API client, or one of the processing stages' },
    ),
    request_id: Nullable(Type.String({ description: 'The request that caused it (x-request-id)' })),
    fields: Type.Array(Type.String(), { description: 'The memo fields (REST names) the event set or changed' }),
    content_revision: Nullable(Type.Integer({ description: 'The content revision the event created or belongs to' })),
    content_length: Nullable(Type.Integer({ description: 'Length of the new content, for events that set content (never the content)' })),
    summary_source: Type.Optional(SummarySourceField),
    summary_reason: Type.Optional(Type.String({ description: "MemoSummarized with extractive-fallback: why the model's summary was not used" })),
  },
  { $id: 'MemoHistoryEntry' },
);
export type MemoHistoryEntry = Static<typeof MemoHistoryEntry>;

export const MemoHistoryResponse = Type.Object(
  { memo_uuid: Uuid, revisions: Type.Array(MemoHistoryEntry) },
  { $id: 'MemoHistoryResponse' },
);
export type MemoHistoryResponse = Static<typeof MemoHistoryResponse>;

export interface MemoListInput {
  page: number;
  pageSize: number;
  filters: Filter[];
}

function pageNumber(value: unknown, field: string, fallback: number, max?: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new MemexError('InvalidRequest', `${field} must be an integer greater than or equal to 1`);
  if (max !== undefined && n > max) throw new MemexError('InvalidRequest', `${field} must be less than or equal to ${max}`);
  return n;
}

/** `page`, `page_size` (1–100, default 20) and `filters` (a JSON array in the query string). */
export function parseMemoListQuery(query: Record<string, unknown>): MemoListInput {
  const page = pageNumber(query.page, 'page', 1);
  const pageSize = pageNumber(query.page_size, 'page_size', MEMO_PAGE_SIZE_DEFAULT, MEMO_PAGE_SIZE_MAX);
  let filters: Filter[] = [];
  if (query.filters !== undefined && query.filters !== '') {
    if (typeof query.filters !== 'string') throw new MemexError('InvalidRequest', 'filters must be given once, as a JSON array');
    let parsed: unknown;
    try {
      parsed = JSON.parse(query.filters);
    } catch {
      throw new MemexError('InvalidRequest', 'filters must be a JSON array of filter objects');
    }
    filters = parseFilters(parsed);
  }
  return { page, pageSize, filters };
}
