export { ERRORS, MemexError, errorText, httpStatus, isErrorCode, isMemexError } from './errors';
export type { ErrorCode, WireError } from './errors';

export {
  Buckets,
  ObjectBuckets,
  Consumers,
  Headers,
  QueueGroups,
  SERVICE_NAMES,
  Streams,
  Subjects,
  WebhookConsumers,
  isSubjectToken,
} from './subjects';
export type { ConsumerName, MemoCommandName, ServiceName } from './subjects';

export {
  FILTER_OPERATORS,
  FILTER_TYPES,
  Filter,
  Filters,
  MAX_FILTERS,
  MAX_FILTER_VALUES,
  MAX_FILTERS_BYTES,
  NATIVE_FILTER_FIELDS,
  filterValues,
  matchesFilter,
  matchesFilters,
  metadataStrings,
  parseFilter,
  parseFilters,
} from './filters';
export type { FilterOperator, FilterType, FilterableMemo, NativeFilterField } from './filters';

export { DateTime, ErrorResponse, MAX_SHORT_TEXT, Nullable, OkResponse, Uuid } from './http/common';
export {
  Chunk,
  CreateMemoBody,
  CreateMemoResponse,
  CreateMemosBody,
  CreateMemosItem,
  CreateMemosResponse,
  MAX_BATCH_MEMOS,
  IdType,
  Memo,
  MemoIdParams,
  MemoIdQuery,
  Metadata,
  ProcessingError,
  Tag,
  UpdateMemoBody,
} from './http/memo';
export {
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_METHODS,
  SearchBody,
  SearchResponse,
  SearchResultItem,
} from './http/search';
export type { SearchMethod } from './http/search';
export {
  CHAT_PAGE_SIZE_DEFAULT,
  CHAT_PAGE_SIZE_MAX,
  Chat,
  ChatBody,
  ChatListItem,
  ChatListQuery,
  ChatListResponse,
  ChatParams,
  ChatResponse,
  Citation,
  GenerateBody,
  GenerateResponse,
  IntermediateStep,
  Message,
} from './http/chat';
export type { StreamEvent } from './http/chat';
export { LLM_PROVIDERS, RERANK_TOP_K_MAX, RagConfig, Reference, References, SearchRagConfig, VECTOR_TOP_K_MAX, indexRequestFromRag, parseRagConfig } from './http/ragConfig';
export type { IndexRetrieval, LlmProviderName, RagOptions } from './http/ragConfig';
export {
  DEFAULT_MEMO_TYPE,
  MAX_CONTENT_BYTES,
  MAX_JSON_DEPTH,
  MAX_METADATA_BYTES,
  MAX_METADATA_ENTRIES,
  MAX_PAGE,
  MAX_PROMPT_CHARS,
  MAX_TAGS,
  MAX_TAG_CHARS,
  isUuid,
  jsonBoundsError,
  parseChatBody,
  parseChatListQuery,
  parseCreateMemoBody,
  parseCreateMemosBody,
  parseDateTime,
  parseGenerateBody,
  parseIdType,
  parseSearchBody,
  parseUpdateMemoBody,
} from './http/validation';
export type {
  ChatInput,
  ChatListInput,
  CreateMemoInput,
  GenerateInput,
  SearchInput,
  UpdateMemoInput,
} from './http/validation';

export { INLINE_CONTENT_MAX_BYTES, contentBlobName } from './blobs';
export type { BlobRef, ContentRef } from './blobs';

export { EMPTY_CHUNKS, MEMO_EVENT_TYPES, SUMMARY_SOURCES, packChunks, startsContentRevision, unpackChunks } from './events';
export type {
  ChunkLayout,
  ChunkRecord,
  ErasureReason,
  MemoAttributes,
  MemoEvent,
  MemoEventMessage,
  MemoEventType,
  ProcessingStage,
  SummarySource,
  SealedEventBody,
  TagRecord,
} from './events';

export type {
  ChunkPreview,
  CommandReply,
  CreateBatchItem,
  CreateBatchOutcome,
  MemoCommandPayload,
  MemoCommandResult,
  MemoCommands,
  MemoRef,
  StoredCreateInput,
  StoredUpdateInput,
  SummaryResult,
} from './commands';
export type {
  AgentChatReply,
  AgentChatRequest,
  AgentGenerateReply,
  AgentGenerateRequest,
  ChatCursor,
  ChatGetReply,
  ChatGetRequest,
  ChatListReply,
  ChatListRequest,
  IndexSearchHit,
  IndexSearchReply,
  IndexSearchRequest,
  MemoGetReply,
  MemoGetRequest,
  MemoResolveReply,
  MemoResolveRequest,
  MemoView,
  QueryReply,
  TitleSearchReply,
  TitleSearchRequest,
} from './queries';

export {
  TOKEN_STREAM_HEARTBEAT_MS,
  TOKEN_STREAM_IDLE_TIMEOUT_MS,
  TOKEN_STREAM_WINDOW,
} from './streaming';
export type { StreamAccepted, TokenStreamControl, TokenStreamMessage } from './streaming';

export { DOCUMENT_FORMATS, FORMAT_MIMETYPES, extensionOf, fileBlobName, sniffFileType, zipEntryNames } from './files';
export type { DocumentFormat, SniffedFile } from './files';

export {
  MEMO_PAGE_SIZE_DEFAULT,
  MEMO_PAGE_SIZE_MAX,
  MemoHistoryEntry,
  MemoHistoryResponse,
  MemoListItem,
  MemoListQuery,
  MemoListResponse,
  MemoStatusResponse,
  ProcessingStatus,
  parseMemoListQuery,
} from './http/catalog';
export type { MemoListInput } from './http/catalog';
export type { ContentOrigin, MemoFile } from './events';
export type {
  MemoAddressRequest,
  MemoFileReply,
  MemoHistoryReply,
  MemoListReply,
  MemoListRequest,
  MemoLogReply,
  MemoLogRequest,
  MemoStatusReply,
} from './queries';
export { searchResponseJson, searchResultItem } from './queries';

export {
  AUDIT_LIMIT_DEFAULT,
  AUDIT_LIMIT_MAX,
  AuditEntry,
  AuditQuery,
  AuditResponse,
  CreateKeyBody,
  CreateTokenBody,
  CreatedKey,
  CreatedToken,
  KeyIdParams,
  KeyInfo,
  KeyListResponse,
  SCOPES,
  ScopeSchema,
  TOKEN_TTL_MAX_S,
  isScope,
  parseAuditQuery,
  parseCreateKeyBody,
  parseCreateTokenBody,
  stampIntoSpace,
  withinParent,
} from './access';
export type { AuditFilter, AuditRecord, KeyInput, NewMemoFields, Scope, TokenInput } from './access';
export {
  CreateWebhookBody,
  CreatedWebhook,
  EVENTS_LIMIT_DEFAULT,
  EVENTS_LIMIT_MAX,
  EventsPage,
  EventsQuery,
  FEED_EVENT_TYPES,
  FEED_UPDATE_FIELDS,
  FEED_VERSION,
  FeedEvent,
  FeedEventBody,
  WEBHOOK_DELIVERY_STATUSES,
  Webhook,
  WebhookDeliveries,
  WebhookDelivery,
  WebhookEvents,
  WebhookIdParams,
  WebhookList,
  feedEventId,
  feedEventSeq,
  isFeedEventType,
  parseCreateWebhookBody,
  parseEventsQuery,
  parseFeedTypes,
  webhookUrlProblem,
  webhookView,
  webhookWants,
} from './http/events';
export type { CreateWebhookInput, EventsInput, FeedEventType, FeedUpdateField, StoredFeedEvent, WebhookDeliveryStatus, WebhookRecord } from './http/events';
