/**
 * Request validation with the spec's exact error texts. The TypeBox schemas beside this file describe
 * the same bodies for OpenAPI and types; these functions decide, in the order the spec implies, which
 * single error a bad request gets. Every value they accept also passes its schema (tested).
 */
import { MemexError } from '../errors';
import { parseFilters, type Filter } from '../filters';
import { MAX_SHORT_TEXT } from './common';
import { MAX_BATCH_MEMOS, type IdType } from './memo';
import { CHAT_PAGE_SIZE_DEFAULT, CHAT_PAGE_SIZE_MAX } from './chat';
import { parseRagConfig, type RagOptions } from './ragConfig';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, SEARCH_METHODS, type SearchMethod } from './search';

/**
 * Default largest memo content, in UTF-8 bytes (the gateway's `MEMEX_MAX_CONTENT_BYTES`). Content
 * lives in the blob store and messages carry a reference, so this is bounded by memory and time,
 * not by NATS `max_payload`. Larger content is refused with 413.
 */
export const MAX_CONTENT_BYTES = 16 * 1024 * 1024;

/** Limits a deployment configures (defaults above). */
interface MemoBodyLimits {
  maxContentBytes?: number;
}
/** Largest metadata object, as serialized JSON. */
export const MAX_METADATA_BYTES = 64 * 1024;
/** Deepest nesting of objects and arrays in metadata (the object itself is depth 1). */
export const MAX_JSON_DEPTH = 32;
/** Most keys and array items metadata may hold, counted at every depth. */
export const MAX_METADATA_ENTRIES = 1_000;
/** Highest chat list page: beyond it the offset would be meaningless (and overflow a store's integers). */
export const MAX_PAGE = 1_000_000;
export const MAX_TAGS = 100;
export const MAX_TAG_CHARS = 100;
/** Longest query, prompt, rules or system prompt, in characters. */
export const MAX_PROMPT_CHARS = 20_000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

function bad(detail: string): MemexError {
  return new MemexError('InvalidRequest', detail);
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('Request body must be a JSON object');
  return body as Record<string, unknown>;
}

function rejectUnknown(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw bad(`Unknown field: '${key}'`);
  }
}

function shortText(value: unknown, field: string, { required = false, nullable = false } = {}): string | null | undefined {
  if (value === undefined) {
    if (required) throw bad(`${capitalize(field)} is required`);
    return undefined;
  }
  if (value === null) {
    if (nullable) return null;
    if (required) throw bad(`${capitalize(field)} is required`);
    throw bad(`${field} must be a string`);
  }
  if (typeof value !== 'string') throw bad(`${field} must be a string`);
  if (value.length > MAX_SHORT_TEXT) throw bad(`${field} must be at most ${MAX_SHORT_TEXT} characters`);
  if (required && value.trim() === '') throw bad(`${capitalize(field)} is required`);
  return value;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function content(value: unknown, required: boolean, maxBytes = MAX_CONTENT_BYTES): string | undefined {
  if (value === undefined || value === null) {
    if (required) throw bad('Content is required');
    if (value === null) throw bad('content must be a string');
    return undefined;
  }
  if (typeof value !== 'string') throw bad('content must be a string');
  if (value.trim() === '') throw bad(required ? 'Content is required' : 'content must not be empty');
  // A UTF-16 unit is at most 3 bytes of UTF-8: short strings need no measuring.
  if (value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes) {
    throw new MemexError('PayloadTooLarge', `content must be at most ${maxBytes} bytes (UTF-8)`);
  }
  return value;
}

/**
 * Checks nesting depth and entry count without recursion, so a value nested 100,000 levels deep is
 * refused before anything recursive (serialization, stores) sees it. Returns the first limit broken.
 */
export function jsonBoundsError(value: unknown, field: string, limits: { maxDepth: number; maxEntries: number }): string | undefined {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 1 }];
  let entries = 0;
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limits.maxDepth) return `${field} must not be nested more than ${limits.maxDepth} levels deep`;
    const children = Array.isArray(v) ? v : Object.values(v);
    entries += children.length;
    if (entries > limits.maxEntries) return `${field} must not have more than ${limits.maxEntries} keys and array items`;
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push({ v: child, depth: depth + 1 });
  }
  return undefined;
}

function metadata(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('metadata must be a JSON object');
  const bounds = jsonBoundsError(value, 'metadata', { maxDepth: MAX_JSON_DEPTH, maxEntries: MAX_METADATA_ENTRIES });
  if (bounds) throw bad(bounds);
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_METADATA_BYTES) {
    throw bad(`metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return value as Record<string, unknown>;
}

function tags(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw bad('tags must be an array of strings');
  if (value.length > MAX_TAGS) throw bad(`at most ${MAX_TAGS} tags are allowed`);
  const out: string[] = [];
  for (const tag of value) {
    if (typeof tag !== 'string' || tag.trim() === '') throw bad('tags must be non-empty strings');
    const t = tag.trim();
    if (t.length > MAX_TAG_CHARS) throw bad(`a tag must be at most ${MAX_TAG_CHARS} characters`);
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses an ISO 8601 date or date-time. No zone means UTC; a date alone means its midnight UTC.
 * Returns the canonical form (`toISOString`). Rejects impossible dates such as 2025-02-30.
 */
export function parseDateTime(value: string): string | undefined {
  const m = DATE_TIME_RE.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  const ms = frac.padEnd(3, '0').slice(0, 3);
  const offset = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${offset}`);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

function dateTime(value: unknown, field: string, nullable: boolean): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null && nullable) return null;
  const parsed = typeof value === 'string' ? parseDateTime(value) : undefined;
  if (parsed === undefined) throw bad(`${field} must be an ISO 8601 date-time`);
  return parsed;
}

function memoType(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(value)) {
    throw bad('type must be 1-64 letters, digits or _ . : -');
  }
  return value;
}

export interface CreateMemoInput {
  title: string;
  content: string;
  metadata: Record<string, unknown>;
  referenceId: string | null;
  tags: string[];
  source: string | null;
  type: string;
  expirationDate: string | null;
}

export const DEFAULT_MEMO_TYPE = 'text';

export function parseCreateMemoBody(body: unknown, limits: MemoBodyLimits = {}): CreateMemoInput {
  const b = asObject(body);
  rejectUnknown(b, ['title', 'content', 'metadata', 'reference_id', 'tags', 'source', 'type', 'expiration_date']);
  const title = shortText(b.title, 'title', { required: true }) as string;
  return {
    title,
    content: content(b.content, true, limits.maxContentBytes) as string,
    metadata: metadata(b.metadata) ?? {},
    referenceId: (shortText(b.reference_id, 'reference_id', { nullable: true }) as string | null | undefined) ?? null,
    tags: tags(b.tags) ?? [],
    source: (shortText(b.source, 'source', { nullable: true }) as string | null | undefined) ?? null,
    type: memoType(b.type) ?? DEFAULT_MEMO_TYPE,
    expirationDate: dateTime(b.expiration_date, 'expiration_date', true) ?? null,
  };
}

/**
 * The memos of a POST /api/v1/memo/batch body, each still unparsed: every item is parsed and
 * refused on its own as a POST /api/v1/memo body would be. Anything but `{ memos: [1..1000 items] }`
 * is `InvalidBatch`.
 */
export function parseCreateMemosBody(body: unknown): unknown[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new MemexError('InvalidBatch');
  const { memos, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !Array.isArray(memos) || memos.length < 1 || memos.length > MAX_BATCH_MEMOS) throw new MemexError('InvalidBatch');
  return memos;
}

/** Only the fields present in the request; `null` clears an optional field. */
export interface UpdateMemoInput {
  title?: string;
  metadata?: Record<string, unknown>;
  clientReferenceId?: string | null;
  source?: string | null;
  type?: string;
  expirationDate?: string | null;
  content?: string;
}

export function parseUpdateMemoBody(body: unknown, limits: MemoBodyLimits = {}): UpdateMemoInput {
  const b = asObject(body);
  rejectUnknown(b, ['title', 'metadata', 'client_reference_id', 'source', 'type', 'expiration_date', 'content']);
  if (b.reference_id !== undefined) throw bad("Unknown field: 'reference_id' (on update it is 'client_reference_id')");
  const out: UpdateMemoInput = {};
  if (b.title !== undefined) {
    if (b.title === null || (typeof b.title === 'string' && b.title.trim() === '')) throw bad('title must not be empty');
    out.title = shortText(b.title, 'title') as string;
  }
  if (b.metadata !== undefined) out.metadata = metadata(b.metadata);
  if (b.client_reference_id !== undefined) {
    const ref = shortText(b.client_reference_id, 'client_reference_id', { nullable: true });
    if (ref === '') throw bad('client_reference_id must not be empty');
    out.clientReferenceId = ref ?? null;
  }
  if (b.source !== undefined) out.source = (shortText(b.source, 'source', { nullable: true }) as string | null) ?? null;
  if (b.type !== undefined) out.type = memoType(b.type);
  if (b.expiration_date !== undefined) out.expirationDate = dateTime(b.expiration_date, 'expiration_date', true) ?? null;
  if (b.content !== undefined) out.content = content(b.content, false, limits.maxContentBytes);
  return out;
}

export function parseIdType(value: unknown): IdType {
  if (value === undefined || value === '') return 'memo_uuid';
  if (value === 'memo_uuid' || value === 'reference_id') return value;
  throw new MemexError('InvalidIdType');
}

function projectId(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isUuid(value)) throw bad('project_id must be a UUID');
  return value.toLowerCase();
}

function requiredText(value: unknown, code: 'QueryRequired' | 'PromptRequired'): string {
  if (typeof value !== 'string' || value.trim() === '') throw new MemexError(code);
  if (value.length > MAX_PROMPT_CHARS) throw bad(`${code === 'QueryRequired' ? 'query' : 'prompt'} must be at most ${MAX_PROMPT_CHARS} characters`);
  return value;
}

function optionalText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw bad(`${field} must be a string`);
  if (value.length > MAX_PROMPT_CHARS) throw bad(`${field} must be at most ${MAX_PROMPT_CHARS} characters`);
  return value;
}

function stream(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw bad('stream must be a boolean');
  return value;
}

export interface SearchInput {
  query: string;
  projectId?: string;
  limit: number;
  filters: Filter[];
  searchMethod: SearchMethod;
  rag?: RagOptions;
}

export function parseSearchBody(body: unknown): SearchInput {
  const b = asObject(body);
  const query = requiredText(b.query, 'QueryRequired');
  if (typeof b.search_method !== 'string' || !(SEARCH_METHODS as readonly string[]).includes(b.search_method)) {
    throw new MemexError('InvalidSearchMethod');
  }
  let limit = SEARCH_LIMIT_DEFAULT;
  if (b.limit !== undefined && b.limit !== null) {
    if (typeof b.limit !== 'number' || !Number.isInteger(b.limit)) throw bad('Limit must be an integer from 1 to 50');
    if (b.limit > SEARCH_LIMIT_MAX) throw new MemexError('LimitTooHigh');
    if (b.limit < 1) throw bad('Limit must be greater than or equal to 1');
    limit = b.limit;
  }
  const filters = parseFilters(b.filters);
  rejectUnknown(b, ['query', 'project_id', 'limit', 'filters', 'search_method', 'rag_config']);
  const pid = projectId(b.project_id);
  return { query, limit, filters, searchMethod: b.search_method as SearchMethod, ...(pid ? { projectId: pid } : {}), ...withRag(b.rag_config, 'search') };
}

export interface ChatInput {
  query: string;
  projectId?: string;
  stream: boolean;
  systemPrompt?: string;
  filters: Filter[];
  chatId?: string;
  rag?: RagOptions;
}

export function parseChatBody(body: unknown): ChatInput {
  const b = asObject(body);
  const query = requiredText(b.query, 'QueryRequired');
  const filters = parseFilters(b.filters);
  rejectUnknown(b, ['query', 'project_id', 'stream', 'system_prompt', 'filters', 'chat_id', 'rag_config']);
  if (b.chat_id !== undefined && b.chat_id !== null && !isUuid(b.chat_id)) throw new MemexError('ChatNotFound');
  const pid = projectId(b.project_id);
  const systemPrompt = optionalText(b.system_prompt, 'system_prompt');
  return {
    query,
    stream: stream(b.stream),
    filters,
    ...(pid ? { projectId: pid } : {}),
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    ...(typeof b.chat_id === 'string' ? { chatId: b.chat_id.toLowerCase() } : {}),
    ...withRag(b.rag_config, 'chat'),
  };
}

export interface GenerateInput {
  prompt: string;
  rules?: string;
  projectId?: string;
  stream: boolean;
  filters: Filter[];
  rag?: RagOptions;
}

export function parseGenerateBody(body: unknown): GenerateInput {
  const b = asObject(body);
  const prompt = requiredText(b.prompt, 'PromptRequired');
  const filters = parseFilters(b.filters);
  rejectUnknown(b, ['prompt', 'rules', 'project_id', 'stream', 'filters', 'rag_config']);
  const pid = projectId(b.project_id);
  const rules = optionalText(b.rules, 'rules');
  return {
    prompt,
    stream: stream(b.stream),
    filters,
    ...(pid ? { projectId: pid } : {}),
    ...(rules !== undefined ? { rules } : {}),
    ...withRag(b.rag_config, 'generate'),
  };
}

/** `{ rag }` when the body has a `rag_config`, else nothing (see ragConfig.ts for the rules). */
function withRag(value: unknown, where: 'chat' | 'generate' | 'search'): { rag?: RagOptions } {
  const rag = parseRagConfig(value, where);
  return rag ? { rag } : {};
}

/** A query-string integer from 1 to `max`; anything else (a list, a fraction, a 30-digit number) is 400. */
function positiveInt(value: unknown, field: string, fallback: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  // All digits but too long for a double is still a number, just too big.
  if (Number.isNaN(n) || (Number.isFinite(n) && !Number.isInteger(n)) || n < 1) throw bad(`${field} must be an integer greater than or equal to 1`);
  if (n > max) throw bad(`${field} must be less than or equal to ${max}`);
  return n;
}

export interface ChatListInput {
  page: number;
  pageSize: number;
}

export function parseChatListQuery(query: Record<string, unknown>): ChatListInput {
  return {
    page: positiveInt(query.page, 'page', 1, MAX_PAGE),
    pageSize: positiveInt(query.page_size, 'page_size', CHAT_PAGE_SIZE_DEFAULT, CHAT_PAGE_SIZE_MAX),
  };
}
