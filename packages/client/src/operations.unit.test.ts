import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument, type JsonSchema, type OpenApiDocument } from '@memex/gateway/openapi';
import { OPERATIONS } from './operations';
import type {
  AuditEntry,
  CreateKeyBody,
  CreateTokenBody,
  CreatedKey,
  CreatedToken,
  KeyInfo,
  ChatBody,
  ChatResponse,
  CreateMemoBody,
  CreateMemosBody,
  CreateMemosResponse,
  CreatedWebhook,
  CreateWebhookBody,
  FeedEvent,
  GenerateBody,
  Memo,
  MemoHistory,
  MemoHistoryEntry,
  MemoListItem,
  MemoStatus,
  Message,
  ProjectInfo,
  ResummarizeBody,
  ResummarizeResponse,
  ResummarizeStatus,
  SearchBody,
  SearchResultItem,
  UpdateMemoBody,
  Webhook,
  WebhookDelivery,
} from './types';

/** Every key of T, exactly: the compiler refuses a missing or an extra one. */
const keysOf = <T>() => (keys: Record<keyof T, true>) => Object.keys(keys).sort();

/** SDK types and the named schema (or operation body) they must match field for field. */
const SHAPES: { schema: string; sdk: string[] }[] = [
  { schema: 'CreateMemoBody', sdk: keysOf<CreateMemoBody>()({ title: true, content: true, metadata: true, reference_id: true, tags: true, source: true, type: true, expiration_date: true }) },
  { schema: 'CreateMemosBody', sdk: keysOf<CreateMemosBody>()({ memos: true }) },
  { schema: 'CreateMemosResponse', sdk: keysOf<CreateMemosResponse>()({ ok: true, results: true }) },
  { schema: 'UpdateMemoBody', sdk: keysOf<UpdateMemoBody>()({ title: true, metadata: true, client_reference_id: true, source: true, type: true, expiration_date: true, content: true }) },
  {
    schema: 'Memo',
    sdk: keysOf<Memo>()({
      uuid: true, created_at: true, updated_at: true, title: true, content: true, summary: true, content_length: true, metadata: true,
      client_reference_id: true, source: true, type: true, expiration_date: true, archived: true, pending: true, tags: true, chunks: true,
      processing_error: true,
    }),
  },
  { schema: 'SearchBody', sdk: keysOf<SearchBody>()({ rag_config: true, query: true, search_method: true, limit: true, filters: true, project_id: true }) },
  {
    schema: 'SearchResultItem',
    sdk: keysOf<SearchResultItem>()({ memo_title: true, memo_uuid: true, chunk_uuid: true, chunk_content: true, memo_summary: true, distance: true, score: true }),
  },
  { schema: 'ChatBody', sdk: [...keysOf<ChatBody>()({ rag_config: true, query: true, system_prompt: true, filters: true, chat_id: true, project_id: true }), 'stream'].sort() },
  { schema: 'ChatResponse', sdk: keysOf<ChatResponse>()({ references: true, ok: true, response: true, intermediate_steps: true, chat_id: true, citations: true }) },
  { schema: 'GenerateBody', sdk: [...keysOf<GenerateBody>()({ rag_config: true, prompt: true, rules: true, filters: true, project_id: true }), 'stream'].sort() },
  { schema: 'MemoStatusResponse', sdk: keysOf<MemoStatus>()({ memo_uuid: true, status: true, processing_started_at: true, processing_completed_at: true, error_reason: true, summary_source: true, summary_reason: true }) },
  { schema: 'MemoHistoryResponse', sdk: keysOf<MemoHistory>()({ memo_uuid: true, revisions: true }) },
  {
    schema: 'MemoHistoryEntry',
    sdk: keysOf<MemoHistoryEntry>()({ version: true, event: true, at: true, actor: true, request_id: true, fields: true, content_revision: true, content_length: true, summary_source: true, summary_reason: true }),
  },
  {
    schema: 'MemoListItem',
    sdk: keysOf<MemoListItem>()({
      uuid: true, created_at: true, updated_at: true, title: true, summary: true, content_length: true, metadata: true, client_reference_id: true, processing_status: true,
    }),
  },
  { schema: 'CreateKeyBody', sdk: keysOf<CreateKeyBody>()({ name: true, scopes: true, filters: true, expires_at: true }) },
  { schema: 'CreatedKey', sdk: keysOf<CreatedKey>()({ key_id: true, api_key: true, name: true, scopes: true, filters: true, expires_at: true, created_at: true }) },
  { schema: 'KeyInfo', sdk: keysOf<KeyInfo>()({ key_id: true, name: true, scopes: true, filters: true, expires_at: true, created_at: true, last_used_at: true }) },
  { schema: 'CreateTokenBody', sdk: keysOf<CreateTokenBody>()({ scopes: true, filters: true, ttl_s: true, subject: true }) },
  { schema: 'CreatedToken', sdk: keysOf<CreatedToken>()({ token: true, expires_at: true }) },
  {
    schema: 'AuditEntry',
    sdk: keysOf<AuditEntry>()({ id: true, at: true, key_id: true, subject: true, action: true, status: true, memo_ids: true, request_id: true, query: true }),
  },
  {
    schema: 'ProjectInfo',
    sdk: keysOf<ProjectInfo>()({ project_id: true, name: true, organization_id: true, created_at: true, access: true, rate_limit: true, embedding: true }),
  },
  { schema: 'Message', sdk: keysOf<Message>()({ uuid: true, content: true, sent_by: true, sent_at: true, client_system_prompt: true, incomplete: true }) },
  { schema: 'ResummarizeBody', sdk: keysOf<ResummarizeBody>()({ fallback_only: true }) },
  { schema: 'ResummarizeResponse', sdk: keysOf<ResummarizeResponse>()({ memos: true, fallback_only: true }) },
  { schema: 'ResummarizeStatus', sdk: keysOf<ResummarizeStatus>()({ pending: true }) },
  {
    schema: 'FeedEvent',
    sdk: keysOf<FeedEvent>()({ id: true, type: true, at: true, project_id: true, memo_uuid: true, client_reference_id: true, revision: true, fields: true, stage: true, reason: true }),
  },
  { schema: 'CreateWebhookBody', sdk: keysOf<CreateWebhookBody>()({ url: true, events: true, description: true, project_id: true }) },
  { schema: 'CreatedWebhook', sdk: keysOf<CreatedWebhook>()({ webhook_id: true, url: true, events: true, secret: true, created_at: true }) },
  {
    schema: 'Webhook',
    sdk: keysOf<Webhook>()({ webhook_id: true, url: true, events: true, description: true, created_at: true, disabled: true, disabled_reason: true }),
  },
  { schema: 'WebhookDelivery', sdk: keysOf<WebhookDelivery>()({ event_id: true, attempt: true, status: true, at: true, response_status: true, error: true }) },
];

function apiOperations(doc: OpenApiDocument): Map<string, { method: string; path: string }> {
  const found = new Map<string, { method: string; path: string }>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const [method, operation] of Object.entries(methods)) {
      found.set(operation.operationId ?? `${method} ${path} (no operationId)`, { method: method.toUpperCase(), path });
    }
  }
  return found;
}

describe('the SDK against the gateway’s OpenAPI document', () => {
  let doc: OpenApiDocument;
  beforeAll(async () => {
    doc = await openApiDocument();
  });

  it('has a method for every API operation, with its method and path, and no operation the API lacks', () => {
    const api = apiOperations(doc);
    for (const [id, route] of api) {
      expect(OPERATIONS, `API operation ${id} (${route.method} ${route.path}) has no SDK method`).toHaveProperty(id);
      expect(OPERATIONS[id as keyof typeof OPERATIONS]).toEqual(route);
    }
    expect(Object.keys(OPERATIONS).filter((id) => !api.has(id)), 'SDK methods without an API operation').toEqual([]);
  });

  it.each(SHAPES)('$schema: the SDK type has exactly the schema’s fields', ({ schema, sdk }) => {
    const named: JsonSchema | undefined = doc.components.schemas[schema];
    expect(named, `no component schema ${schema}`).toBeDefined();
    const fields = Object.keys(named!.properties ?? {}).sort();
    expect(fields).toEqual(sdk);
  });
});
