export { MAX_BATCH_MEMOS, MemexClient, retryAfterMs } from './client';
export { MemexApiError, MemexConnectionError, isNotFound } from './errors';
export { OPERATIONS } from './operations';
export { parseEventStream } from './sse';
export { verifyWebhook } from './webhooks';
export type { CreateMemosOptions, CreateOptions, ListMemosQuery, MemexClientOptions, MemoRefOptions, UploadFields, UploadOptions } from './client';
export type { OperationId } from './operations';
export type * from './types';
