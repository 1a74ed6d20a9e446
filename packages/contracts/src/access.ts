/**
 * Scoped access: the scopes a key or token carries, its knowledge space (filters ANDed into every
 * retrieval and lookup), the key, token and audit HTTP shapes, and the rules that keep a key from
 * minting anything wider than itself.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MemexError } from './errors';
import { Filter, matchesFilters, parseFilters, type FilterableMemo } from './filters';
import { Nullable } from './http/common';

export const SCOPES = ['memos:read', 'memos:write', 'search', 'chat', 'generate', 'keys:admin', 'audit:read', 'events:read', 'webhooks:admin'] as const;
export type Scope = (typeof SCOPES)[number];

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);
export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && SCOPE_SET.has(value);
}

export const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)), { description: 'One of ' + SCOPES.join(', ') });
const DateTime = Type.String({ format: 'date-time' });

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    scopes: Type.Array(ScopeSchema, { minItems: 1 }),
    filters: Type.Optional(Type.Array(Filter, { description: "The key's knowledge space: ANDed into everything it reads, searches and writes" })),
    expires_at: Type.Optional(DateTime),
  },
  { $id: 'CreateKeyBody' },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

export const KeyInfo = Type.Object(
  {
    key_id: Type.String(),
    name: Type.String(),
    scopes: Type.Array(ScopeSchema),
    filters: Type.Array(Filter),
    expires_at: Nullable(DateTime),
    created_at: DateTime,
    last_used_at: Nullable(DateTime),
  },
  { $id: 'KeyInfo' },
);
export type KeyInfo = Static<typeof KeyInfo>;

export const CreatedKey = Type.Object(
  {
    key_id: Type.String(),
    api_key: Type.String({ description: 'The secret, shown this once; stored hashed' }),
    name: Type.String(),
    scopes: Type.Array(ScopeSchema),
    filters: Type.Array(Filter),
    expires_at: Nullable(DateTime),
    created_at: DateTime,
  },
  { $id: 'CreatedKey' },
);
export type CreatedKey = Static<typeof CreatedKey>;

export const KeyListResponse = Type.Object({ results: Type.Array(KeyInfo) }, { $id: 'KeyListResponse' });
export type KeyListResponse = Static<typeof KeyListResponse>;

export const KeyIdParams = Type.Object({ key_id: Type.String() });

/** Longest a token lives, seconds. */
export const TOKEN_TTL_MAX_S = 86_400;

export const CreateTokenBody = Type.Object(
  {
    scopes: Type.Array(ScopeSchema, { minItems: 1 }),
    filters: Type.Optional(Type.Array(Filter)),
    ttl_s: Type.Integer({ minimum: 1, maximum: TOKEN_TTL_MAX_S }),
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Who the token is for (an end user id); recorded in the audit trail' })),
  },
  { $id: 'CreateTokenBody' },
);
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const CreatedToken = Type.Object(
  { token: Type.String({ description: 'Send as Authorization: Bearer <token>' }), expires_at: DateTime },
  { $id: 'CreatedToken' },
);
export type CreatedToken = Static<typeof CreatedToken>;

export const AUDIT_LIMIT_MAX = 1000;
export const AUDIT_LIMIT_DEFAULT = 100;

export const AuditEntry = Type.Object(
  {
    id: Type.String({ description: 'The cursor of this entry; pass it as `after` to read what follows' }),
    at: DateTime,
    key_id: Nullable(Type.String({ description: 'The key used, or the key that minted the token used' })),
    subject: Nullable(Type.String({ description: "The token's subject; null for a key" })),
    action: Type.String({ description: 'memo.create, memo.read, memo.list, memo.update, memo.delete, memo.upload, search, chat, generate, keys.create, keys.delete, tokens.create, mcp.<tool>, …' }),
    status: Type.Integer(),
    memo_ids: Type.Array(Type.String()),
    request_id: Type.String(),
    query: Type.Optional(Type.String({ description: 'With MEMEX_AUDIT_QUERIES=hash: sha256 of the query; =full: the query' })),
  },
  { $id: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'A cursor: an entry id or a previous `next`' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_LIMIT_MAX, default: AUDIT_LIMIT_DEFAULT })),
  key_id: Type.Optional(Type.String()),
  memo_id: Type.Optional(Type.String()),
  action: Type.Optional(Type.String()),
  project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })),
});

export const AuditResponse = Type.Object(
  { results: Type.Array(AuditEntry), next: Nullable(Type.String({ description: 'Pass as `after` for what follows; null: nothing more yet' })) },
  { $id: 'AuditResponse' },
);
export type AuditResponse = Static<typeof AuditResponse>;

/** One entry as the gateway writes it to the audit stream; the stream sequence is its id. */
export interface AuditRecord {
  at: string;
  project_id: string;
  key_id: string | null;
  subject: string | null;
  action: string;
  status: number;
  memo_ids: string[];
  request_id: string;
  query?: string;
}

const invalid = (detail: string) => new MemexError('InvalidRequest', detail);

function parseScopes(input: unknown): Scope[] {
  if (!Array.isArray(input) || input.length === 0) throw invalid(`scopes must be a non-empty list of: ${SCOPES.join(', ')}`);
  for (const s of input) if (!isScope(s)) throw invalid(`scopes: ${JSON.stringify(s)} is not one of ${SCOPES.join(', ')}`);
  return [...new Set(input as Scope[])];
}

function objectBody(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('The request body must be a JSON object');
  return input as Record<string, unknown>;
}

function rejectUnknown(body: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(body)) if (!known.includes(key)) throw invalid(`Unknown field '${key}'`);
}

export interface KeyInput {
  name: string;
  scopes: Scope[];
  filters: Filter[];
  expiresAt: string | null;
}

/** Validates POST /api/v1/project/keys; each 400 names the field (filters with the spec's texts). */
export function parseCreateKeyBody(input: unknown, now = Date.now()): KeyInput {
  const body = objectBody(input);
  rejectUnknown(body, ['name', 'scopes', 'filters', 'expires_at', 'project_id']);
  const { name } = body;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 255) throw invalid('name is required: a string of 1-255 characters');
  const scopes = parseScopes(body.scopes);
  const filters = parseFilters(body.filters);
  let expiresAt: string | null = null;
  if (body.expires_at !== undefined && body.expires_at !== null) {
    const ms = typeof body.expires_at === 'string' && /^\d{4}-\d\d-\d\dT/.test(body.expires_at) ? Date.parse(body.expires_at) : NaN;
    if (!Number.isFinite(ms)) throw invalid('expires_at must be an ISO 8601 datetime');
    if (ms <= now) throw invalid('expires_at must be in the future');
    expiresAt = new Date(ms).toISOString();
  }
  return { name, scopes, filters, expiresAt };
}

export interface TokenInput {
  scopes: Scope[];
  filters: Filter[];
  ttlS: number;
  subject: string | null;
}

export function parseCreateTokenBody(input: unknown): TokenInput {
  const body = objectBody(input);
  rejectUnknown(body, ['scopes', 'filters', 'ttl_s', 'subject', 'project_id']);
  const scopes = parseScopes(body.scopes);
  const filters = parseFilters(body.filters);
  const ttl = body.ttl_s;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > TOKEN_TTL_MAX_S) throw invalid(`ttl_s must be an integer from 1 to ${TOKEN_TTL_MAX_S}`);
  let subject: string | null = null;
  if (body.subject !== undefined && body.subject !== null) {
    if (typeof body.subject !== 'string' || body.subject === '' || body.subject.length > 255) throw invalid('subject must be a string of 1-255 characters');
    subject = body.subject;
  }
  return { scopes, filters, ttlS: ttl, subject };
}

export interface AuditFilter {
  /** A cursor (`<seq>-<index>`, an entry's id or a previous `next`); absent: from the oldest kept. */
  after?: string;
  limit: number;
  keyId?: string;
  memoId?: string;
  action?: string;
}

export function parseAuditQuery(query: Record<string, unknown>): AuditFilter {
  const after = query.after === undefined || query.after === '' ? undefined : query.after;
  if (after !== undefined && (typeof after !== 'string' || !/^\d{1,15}(-\d{1,6})?$/.test(after))) throw invalid('after must be a cursor from an earlier answer');
  const limit = query.limit === undefined || query.limit === '' ? AUDIT_LIMIT_DEFAULT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_LIMIT_MAX) throw invalid(`limit must be an integer from 1 to ${AUDIT_LIMIT_MAX}`);
  const text = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string' || v.length > 255) throw invalid(`${name} must be a string of at most 255 characters`);
    return v;
  };
  const keyId = text('key_id');
  const memoId = text('memo_id')?.toLowerCase();
  const action = text('action');
  return { ...(after !== undefined ? { after: after as string } : {}), limit, ...(keyId ? { keyId } : {}), ...(memoId ? { memoId } : {}), ...(action ? { action } : {}) };
}

const sameFilter = (a: Filter, b: Filter) =>
  a.field === b.field &&
  a.operator === b.operator &&
  a.filter_type === b.filter_type &&
  (Array.isArray(a.value) && Array.isArray(b.value) ? a.value.length === b.value.length && a.value.every((v, i) => v === (b.value as string[])[i]) : a.value === b.value);

/**
 * Whether a key or token with `scopes` and `filters` is no wider than its parent: every scope is
 * the parent's, and every parent filter is among the child's (a space narrows by adding filters,
 * so the child's space is the parent's ANDed with more).
 */
export function withinParent(parent: { scopes: readonly Scope[]; space: readonly Filter[] }, child: { scopes: readonly Scope[]; filters: readonly Filter[] }): boolean {
  if (!child.scopes.every((s) => parent.scopes.includes(s))) return false;
  return parent.space.every((p) => child.filters.some((c) => sameFilter(p, c)));
}

/** A new memo's attributes as its create body gives them, for the space check. */
export interface NewMemoFields {
  title: string;
  source?: string | null;
  reference_id?: string | null;
  tags?: readonly string[];
  metadata?: Record<string, unknown>;
}

/**
 * Puts a new memo inside `space`: each `eq` filter on `source` or a metadata key fills that field
 * when the body leaves it out. Then the memo must match every filter; a body that contradicts the
 * space is `Access denied`. Returns the fields stamped (to merge into the body).
 */
export function stampIntoSpace(space: readonly Filter[], memo: NewMemoFields): { source?: string; metadata?: Record<string, unknown> } {
  if (space.length === 0) return {};
  let source = memo.source ?? undefined;
  let metadata = memo.metadata;
  const stamped: { source?: string; metadata?: Record<string, unknown> } = {};
  for (const f of space) {
    if (f.operator !== 'eq' || typeof f.value !== 'string') continue;
    if (f.filter_type === 'native_field' && f.field === 'source' && source === undefined) {
      source = f.value;
      stamped.source = f.value;
    } else if (f.filter_type === 'custom_metadata' && !Object.hasOwn(metadata ?? {}, f.field)) {
      metadata = { ...metadata, [f.field]: f.value };
      stamped.metadata = metadata;
    }
  }
  const filterable: FilterableMemo = {
    title: memo.title,
    source: source ?? null,
    clientReferenceId: memo.reference_id ?? null,
    tags: memo.tags ?? [],
    metadata: metadata ?? {},
  };
  if (!matchesFilters(filterable, space)) throw new MemexError('AccessDenied');
  return stamped;
}
