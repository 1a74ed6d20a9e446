/**
 * The API's JSON shapes, written out so the SDK has no runtime or build dependency on the server's
 * contracts. `operations.unit.test.ts` holds these to the gateway's OpenAPI document, and
 * `accessTypes.unit.test.ts` holds the access types to the contracts' own, type for type.
 */

export type IdType = 'memo_uuid' | 'reference_id';
export type SearchMethod = 'chunk_vector_search' | 'title_contains' | 'title_startswith';
export type FilterOperator = 'eq' | 'neq' | 'contains' | 'startswith' | 'endswith' | 'in' | 'not_in';
export type FilterType = 'native_field' | 'custom_metadata';

export interface Filter {
  field: string;
  operator: FilterOperator;
  value: string | string[];
  filter_type: FilterType;
}

export interface Tag {
  uuid: string;
  tag: string;
}

export interface Chunk {
  uuid: string;
  chunk_content: string;
  chunk_index: number;
}

export interface ProcessingError {
  stage: string;
  message: string;
  revision: number;
  at: string;
}

export interface Memo {
  uuid: string;
  created_at: string;
  updated_at: string;
  title: string;
  content: string;
  summary: string;
  content_length: number;
  metadata: Record<string, unknown>;
  client_reference_id: string | null;
  source: string | null;
  type: string;
  expiration_date: string | null;
  archived: boolean;
  pending: boolean;
  tags: Tag[];
  chunks: Chunk[];
  processing_error: ProcessingError | null;
}

export interface CreateMemoBody {
  title: string;
  content: string;
  metadata?: Record<string, unknown>;
  reference_id?: string;
  tags?: string[];
  source?: string;
  type?: string;
  expiration_date?: string;
}

export interface CreateMemoResponse {
  ok: true;
  memo_uuid: string;
}

/** `POST /api/v1/memo/batch`: 1 to 1000 memos, each the body of `POST /api/v1/memo`. */
export interface CreateMemosBody {
  memos: CreateMemoBody[];
}

/** One item's outcome, in request order: created, or refused with the status and text a single POST would give. */
export type CreateMemosItem = { ok: true; memo_uuid: string } | { ok: false; status: number; error: string };

export interface CreateMemosResponse {
  ok: true;
  results: CreateMemosItem[];
}

export interface UpdateMemoBody {
  title?: string;
  metadata?: Record<string, unknown>;
  client_reference_id?: string | null;
  source?: string | null;
  type?: string;
  expiration_date?: string | null;
  content?: string;
}

export interface OkResponse {
  ok: boolean;
}

export type ProcessingStatus = 'processing' | 'processed' | 'error';

/** One row of the memo list (the documents issue's Skald-shaped list). */
export interface MemoListItem {
  uuid: string;
  created_at: string;
  updated_at: string;
  title: string;
  summary: string;
  content_length: number;
  metadata: Record<string, unknown>;
  client_reference_id: string | null;
  processing_status: ProcessingStatus;
}

export interface Page<T> {
  results: T[];
  count: number;
  page: number;
  page_size: number;
  total_pages: number;
}

/** A page of memos; `next` and `previous` are absolute paths (`/api/v1/memo?…`) with the same query, null at the ends. */
export interface MemoListResponse extends Page<MemoListItem> {
  next: string | null;
  previous: string | null;
}

export interface MemoStatus {
  memo_uuid: string;
  status: ProcessingStatus;
  processing_started_at: string | null;
  processing_completed_at: string | null;
  error_reason: string | null;
  /** What wrote the summary; null until it exists. */
  summary_source: SummarySource | null;
  /** With `extractive-fallback`: why the model's summary was not used. */
  summary_reason: string | null;
}

/** model: its structured reply; model-text: its prose; extractive-fallback: the model failed; extractive: no model configured. */
export type SummarySource = 'model' | 'model-text' | 'extractive-fallback' | 'extractive';

export interface MemoHistoryEntry {
  version: number;
  event: string;
  at: string;
  actor: 'client' | 'extractor' | 'indexer' | 'agent' | 'expiry';
  request_id: string | null;
  fields: string[];
  content_revision: number | null;
  content_length: number | null;
  /** MemoSummarized: what wrote the summary. */
  summary_source?: SummarySource;
  /** MemoSummarized with extractive-fallback: why. */
  summary_reason?: string;
}

export interface MemoHistory {
  memo_uuid: string;
  revisions: MemoHistoryEntry[];
}

/** Retrieval settings (`rag_config`, see the API's RagConfig / SearchRagConfig schemas); typed loosely for now. */
export type RagConfig = Record<string, unknown>;

/** A chunk an answer was given (with `rag_config.references.enabled`); see the API's Reference schema. */
export type Reference = Record<string, unknown>;

/** `references`: each chunk the answer was given, keyed by the n of its [n] marker in the text. */
export type References = Record<string, Reference>;

export interface SearchBody {
  rag_config?: RagConfig;
  query: string;
  search_method: SearchMethod;
  limit?: number;
  filters?: Filter[];
  project_id?: string;
}

export interface SearchResultItem {
  memo_title: string;
  memo_uuid: string;
  chunk_uuid: string | null;
  chunk_content: string | null;
  memo_summary: string;
  /** 1 − relevance for chunk_vector_search (lower is closer); null for title searches. */
  distance: number | null;
  /** The fused relevance (1 − distance) and its parts, when the server reports them. */
  score?: { relevance: number; lexical: number; dense: number } | null;
}

export interface SearchResponse {
  results: SearchResultItem[];
}

export interface Citation {
  index: number;
  memo_uuid: string;
  memo_title: string;
  chunk_uuid: string;
}

export interface IntermediateStep {
  tool: string;
  input: { query: string; limit: number };
  results: { memo_uuid: string; chunk_uuid: string; distance: number }[];
}

export interface ChatBody {
  query: string;
  system_prompt?: string;
  filters?: Filter[];
  chat_id?: string;
  project_id?: string;
  rag_config?: RagConfig;
}

export interface ChatResponse {
  ok: boolean;
  response: string;
  intermediate_steps: IntermediateStep[];
  chat_id: string;
  citations: Citation[];
  references?: References;
}

export interface GenerateBody {
  rag_config?: RagConfig;
  prompt: string;
  rules?: string;
  filters?: Filter[];
  project_id?: string;
}

export interface GenerateResponse {
  ok: boolean;
  response: string;
  intermediate_steps: IntermediateStep[];
  citations: Citation[];
  references?: References;
}

/** One event of a streamed chat or generate answer. */
export type StreamEvent =
  | { type: 'token'; content: string }
  | { type: 'citations'; citations: Citation[] }
  /** `content` is the References object as JSON text. */
  | { type: 'references'; content: string }
  | { type: 'error'; content: string }
  | { type: 'done'; chat_id?: string };

export interface ChatListItem {
  uuid: string;
  created_at: string;
  title: string;
  message_count: number;
  last_message_at: string;
}

export type ChatListResponse = Page<ChatListItem>;

export interface Message {
  uuid: string;
  content: string;
  sent_by: 'user' | 'model';
  sent_at: string;
  client_system_prompt: string | null;
  /** Only on a model message that is not the whole answer: a cap cut it, or the model failed mid-stream. */
  incomplete?: { reason: 'max_tokens' | 'timeout' | 'error'; detail: string };
}

export interface Chat {
  uuid: string;
  created_at: string;
  messages: Message[];
}

export interface ProjectInfo {
  project_id: string;
  name: string;
  organization_id: string;
  created_at: string;
  rate_limit: { limit: number; window_ms: number; remaining: number; reset_s: number } | null;
  /** What the calling key or token may do. */
  access: { key_id: string | null; owner: boolean; scopes: Scope[]; filters: Filter[]; subject: string | null; expires_at: string | null };
  embedding: {
    active_model: string | null;
    reindex: { model: string; requested_at: string; replayed: number | null; total: number | null; started: boolean } | null;
  };
}

export interface RotatedKey {
  project_id: string;
  api_key: string;
}

export interface ResummarizeBody {
  /** Only memos whose `summary_source` is `extractive-fallback`; default: every summarized memo. */
  fallback_only?: boolean;
}

/** How many memos were queued to be summarized again by the model. */
export interface ResummarizeResponse {
  memos: number;
  fallback_only: boolean;
}

/** Queued re-summaries of the project not yet done; 0 when all are. */
export interface ResummarizeStatus {
  pending: number;
}

export interface DownloadedFile {
  bytes: Uint8Array;
  content_type: string;
  filename: string | null;
}

// Scoped access (keys, tokens, audit)

export type Scope = 'memos:read' | 'memos:write' | 'search' | 'chat' | 'generate' | 'keys:admin' | 'audit:read' | 'events:read' | 'webhooks:admin';

export interface CreateKeyBody {
  name: string;
  scopes: Scope[];
  /** The key's knowledge space, ANDed into everything it reads, searches and writes. */
  filters?: Filter[];
  expires_at?: string;
}

export interface KeyInfo {
  key_id: string;
  name: string;
  scopes: Scope[];
  filters: Filter[];
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

export interface CreatedKey {
  key_id: string;
  /** The secret, shown this once. */
  api_key: string;
  name: string;
  scopes: Scope[];
  filters: Filter[];
  expires_at: string | null;
  created_at: string;
}

export interface KeyListResponse {
  results: KeyInfo[];
}

export interface CreateTokenBody {
  scopes: Scope[];
  filters?: Filter[];
  /** 1 to 86400 seconds. */
  ttl_s: number;
  subject?: string;
}

export interface CreatedToken {
  token: string;
  expires_at: string;
}

export interface AuditEntry {
  id: string;
  at: string;
  key_id: string | null;
  subject: string | null;
  action: string;
  status: number;
  memo_ids: string[];
  request_id: string;
  query?: string;
}

export interface AuditQuery {
  after?: string;
  limit?: number;
  key_id?: string;
  memo_id?: string;
  action?: string;
}

export interface AuditResponse {
  results: AuditEntry[];
  next: string | null;
}

// The public event feed and webhooks

export type FeedEventType = 'memo.created' | 'memo.updated' | 'memo.processed' | 'memo.failed' | 'memo.deleted' | 'memo.expired';

/** A public event: ids and what changed, never content or title. `id` is an opaque, increasing cursor. */
export interface FeedEvent {
  id: string;
  type: FeedEventType;
  at: string;
  project_id: string;
  memo_uuid: string;
  client_reference_id: string | null;
  revision: number | null;
  /** memo.updated: the changed fields. */
  fields?: string[];
  /** memo.failed: extracting, indexing or summarizing. */
  stage?: string;
  /** memo.failed: why. */
  reason?: string;
}

export interface EventsPage {
  events: FeedEvent[];
  /** The id of the last event returned, or the given `after` when none (null: none and no `after`). */
  next: string | null;
}

export interface EventsQuery {
  after?: string;
  /** 1–1000, default 100. */
  limit?: number;
  types?: FeedEventType[];
}

export interface CreateWebhookBody {
  url: string;
  /** Event types, or `['*']`. */
  events: (FeedEventType | '*')[];
  description?: string;
  /** Only with an organization token (the client's `projectId` fills it in). */
  project_id?: string;
}

export interface CreatedWebhook {
  webhook_id: string;
  url: string;
  events: string[];
  /** `whsec_…`: shown in this answer only. */
  secret: string;
  created_at: string;
}

export interface Webhook {
  webhook_id: string;
  url: string;
  events: string[];
  description: string | null;
  created_at: string;
  disabled: boolean;
  disabled_reason: string | null;
}

export interface WebhookDelivery {
  event_id: string;
  attempt: number;
  status: 'delivered' | 'retrying' | 'failed';
  at: string;
  response_status: number | null;
  error?: string;
}
