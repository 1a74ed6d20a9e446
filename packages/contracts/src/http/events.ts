import { Type, type Static } from '@sinclair/typebox';
import { MemexError } from '../errors';
import type { Filter } from '../filters';
import { DateTime, Nullable, Uuid } from './common';

/**
 * The public event feed, version 1: what happened to a memo, by ids, never its content or title.
 * These names and fields are a published contract; the internal memo events may change under them.
 */
export const FEED_EVENT_TYPES = ['memo.created', 'memo.updated', 'memo.processed', 'memo.failed', 'memo.deleted', 'memo.expired'] as const;
export type FeedEventType = (typeof FEED_EVENT_TYPES)[number];
/** The version of the public types above; it is part of the feed's subjects. */
export const FEED_VERSION = 1;

export function isFeedEventType(value: unknown): value is FeedEventType {
  return typeof value === 'string' && (FEED_EVENT_TYPES as readonly string[]).includes(value);
}

/** Memo fields a `memo.updated` can name, as the REST API spells them. */
export const FEED_UPDATE_FIELDS = ['title', 'content', 'metadata', 'client_reference_id', 'source', 'type', 'expiration_date'] as const;
export type FeedUpdateField = (typeof FEED_UPDATE_FIELDS)[number];

/** An event as the feed stream stores it: the public event without its `id` (the stream position gives that). */
export const FeedEventBody = Type.Object({
  type: Type.Union(FEED_EVENT_TYPES.map((t) => Type.Literal(t))),
  at: DateTime,
  project_id: Uuid,
  memo_uuid: Uuid,
  client_reference_id: Nullable(Type.String()),
  revision: Nullable(Type.Integer({ description: 'The content revision the event is about; null once the memo is erased' })),
  fields: Type.Optional(Type.Array(Type.String(), { description: 'memo.updated: the names of the changed fields' })),
  stage: Type.Optional(Type.String({ description: 'memo.failed: extracting, indexing or summarizing' })),
  reason: Type.Optional(Type.String({ description: 'memo.failed: why' })),
});
export type FeedEventBody = Static<typeof FeedEventBody>;

/**
 * A feed message as stored: the public body, but a reference id sealed with the memo's key
 * (`client_reference_sealed`, `client_reference_id` null), so erasing the memo's key erases it
 * from the feed too. Readers open it (`openFeedEvent` in runtime).
 */
export interface StoredFeedEvent extends FeedEventBody {
  client_reference_sealed?: string;
  /**
   * What a key's space (its filters) reads of the memo as it stood after the event: the
   * `FilterableMemo` sealed with the memo's key. Unreadable once the memo is erased.
   */
  space_sealed?: string;
  /**
   * The same memo's source, tags and metadata values as keyed digests salted with the memo id
   * (`feedSpaceDigests` in runtime): what judges the event for a space once `space_sealed` no
   * longer opens (the memo erased, and its tombstone). Equality only; no value is readable.
   */
  space_digests?: string[];
}

export const FeedEvent = Type.Composite(
  [Type.Object({ id: Type.String({ description: 'Opaque cursor: increasing, stable across restarts' }) }), FeedEventBody],
  { $id: 'FeedEvent' },
);
export type FeedEvent = Static<typeof FeedEvent>;

export const EventsQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'An event id: the page starts after it (default: the start of retention)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  types: Type.Optional(Type.String({ description: 'Comma-separated event types to keep (default: all)' })),
  project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })),
});

export const EventsPage = Type.Object(
  {
    events: Type.Array(FeedEvent),
    next: Nullable(Type.String({ description: 'The id of the last event returned, or the given after when none' })),
  },
  { $id: 'EventsPage' },
);
export type EventsPage = Static<typeof EventsPage>;

export const EVENTS_LIMIT_DEFAULT = 100;
export const EVENTS_LIMIT_MAX = 1000;

const ID_PREFIX = 'evt_';
const ID_DIGITS = 12;

/** The public id of the feed message at stream sequence `seq`: fixed width, so ids sort as they increase. */
export function feedEventId(seq: number): string {
  return ID_PREFIX + seq.toString(36).padStart(ID_DIGITS, '0');
}

/** The stream sequence an event id stands for; undefined for anything that is not one. */
export function feedEventSeq(id: string): number | undefined {
  if (id.length !== ID_PREFIX.length + ID_DIGITS || !id.startsWith(ID_PREFIX)) return undefined;
  const digits = id.slice(ID_PREFIX.length);
  if (!/^[0-9a-z]+$/.test(digits)) return undefined;
  const seq = Number.parseInt(digits, 36);
  return Number.isSafeInteger(seq) ? seq : undefined;
}

export interface EventsInput {
  /** The stream sequence to start after (0: from the start of retention). */
  afterSeq: number;
  after: string | null;
  limit: number;
  /** Undefined: every type. */
  types: FeedEventType[] | undefined;
}

const bad = (message: string) => new MemexError('InvalidRequest', message);

function parseCursor(value: unknown, field: string): { seq: number; id: string } | undefined {
  if (value === undefined || value === '') return undefined;
  const seq = typeof value === 'string' ? feedEventSeq(value) : undefined;
  if (seq === undefined) throw bad(`${field} must be an event id from this feed`);
  return { seq, id: value as string };
}

/** Parses a comma list of event types (`*` or empty: all). */
export function parseFeedTypes(value: unknown, field = 'types'): FeedEventType[] | undefined {
  if (value === undefined || value === '' || value === '*') return undefined;
  if (typeof value !== 'string') throw bad(`${field} must be a comma-separated list of event types`);
  const out: FeedEventType[] = [];
  for (const part of value.split(',')) {
    const t = part.trim();
    if (!isFeedEventType(t)) throw bad(`${field}: unknown event type ${JSON.stringify(t)}; known: ${FEED_EVENT_TYPES.join(', ')}`);
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/**
 * GET /api/v1/events's query; `lastEventId` is an SSE client's `Last-Event-ID` header, which wins
 * over `after` (it is where the client's stream broke off).
 */
export function parseEventsQuery(query: Record<string, unknown>, lastEventId?: string): EventsInput {
  const cursor = parseCursor(lastEventId, 'Last-Event-ID') ?? parseCursor(query.after, 'after');
  let limit = EVENTS_LIMIT_DEFAULT;
  if (query.limit !== undefined) {
    const raw = query.limit;
    const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : typeof raw === 'number' ? raw : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > EVENTS_LIMIT_MAX) throw bad(`limit must be an integer from 1 to ${EVENTS_LIMIT_MAX}`);
    limit = n;
  }
  return { afterSeq: cursor?.seq ?? 0, after: cursor?.id ?? null, limit, types: parseFeedTypes(query.types) };
}

// ---- webhooks ----

export const WebhookEvents = Type.Array(Type.String(), { description: 'Event types to deliver, or ["*"] for all' });

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ description: 'https URL the events are POSTed to' }),
    events: WebhookEvents,
    description: Type.Optional(Type.String({ maxLength: 500 })),
    project_id: Type.Optional(Type.String({ description: 'Only with an organization token' })),
  },
  { $id: 'CreateWebhookBody' },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const Webhook = Type.Object(
  {
    webhook_id: Uuid,
    url: Type.String(),
    events: WebhookEvents,
    description: Nullable(Type.String()),
    created_at: DateTime,
    disabled: Type.Boolean({ description: 'True once deliveries failed for the disable window (5 days by default)' }),
    disabled_reason: Nullable(Type.String()),
  },
  { $id: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

export const CreatedWebhook = Type.Object(
  {
    webhook_id: Uuid,
    url: Type.String(),
    events: WebhookEvents,
    secret: Type.String({ description: 'whsec_… signing secret, shown this once' }),
    created_at: DateTime,
  },
  { $id: 'CreatedWebhook' },
);
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const WebhookList = Type.Object({ results: Type.Array(Webhook) }, { $id: 'WebhookList' });
export type WebhookList = Static<typeof WebhookList>;

export const WEBHOOK_DELIVERY_STATUSES = ['delivered', 'retrying', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookDelivery = Type.Object({
  event_id: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  status: Type.Union(WEBHOOK_DELIVERY_STATUSES.map((s) => Type.Literal(s)), {
    description: 'delivered (2xx), retrying (failed, another attempt is due) or failed (the last attempt failed)',
  }),
  at: DateTime,
  response_status: Nullable(Type.Integer({ description: 'The receiver’s HTTP status; null when no answer came' })),
  error: Type.Optional(Type.String()),
}, { $id: 'WebhookDelivery' });
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveries = Type.Object({ results: Type.Array(WebhookDelivery) }, { $id: 'WebhookDeliveries' });
export type WebhookDeliveries = Static<typeof WebhookDeliveries>;

export const WebhookIdParams = Type.Object({ webhook_id: Type.String() });

/** What the KV bucket keeps per webhook (`Buckets.webhooks`, key `<project>.<webhook>`). */
export interface WebhookRecord {
  webhook_id: string;
  project_id: string;
  url: string;
  /** Types, or `['*']`. */
  events: string[];
  description: string | null;
  /**
   * The signing secret (`whsec_` + base64) sealed with the webhook's own data key in the keyring
   * (`openWebhookSecret` in runtime); deleting the webhook shreds that key. Never answered after creation.
   */
  secret_sealed?: string;
  /** A plain secret, as records made before sealing kept it; read, never written. */
  secret?: string;
  /** The registering key's space: only events of memos inside it are delivered ([] for owners). */
  filters?: Filter[];
  /** The key that registered the webhook (null: an owner key or organization token); it stops with that key. */
  key_id?: string | null;
  /** When the registering key or token expires: no deliveries after it. */
  expires_at?: string | null;
  created_at: string;
  disabled: boolean;
  disabled_reason: string | null;
  /** When the current run of failed deliveries began; null while deliveries succeed. */
  failing_since: string | null;
}

export interface CreateWebhookInput {
  url: URL;
  events: string[];
  description: string | null;
}

/** A webhook URL's scheme and shape; where it resolves to is checked apart (at creation and every send). */
export function webhookUrlProblem(value: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'url must use https';
  if (url.username || url.password) return 'url must not carry credentials';
  return undefined;
}

/** POST /api/v1/webhooks's body (the URL's address is checked apart). */
export function parseCreateWebhookBody(body: unknown, allowPrivate: boolean): CreateWebhookInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('Body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.url !== 'string' || b.url === '') throw bad('url is required');
  if (b.url.length > 2048) throw bad('url must be at most 2048 characters');
  const problem = webhookUrlProblem(b.url, allowPrivate);
  if (problem) throw bad(problem);
  if (!Array.isArray(b.events) || b.events.length === 0) throw bad('events must be a non-empty list of event types, or ["*"]');
  let events: string[];
  if (b.events.length === 1 && b.events[0] === '*') events = ['*'];
  else {
    events = [];
    for (const t of b.events) {
      if (!isFeedEventType(t)) throw bad(`events: unknown event type ${JSON.stringify(t)}; known: ${FEED_EVENT_TYPES.join(', ')}, or "*" alone`);
      if (!events.includes(t)) events.push(t);
    }
  }
  if (b.description !== undefined && b.description !== null && (typeof b.description !== 'string' || b.description.length > 500)) {
    throw bad('description must be a string of at most 500 characters');
  }
  return { url: new URL(b.url), events, description: typeof b.description === 'string' ? b.description : null };
}

/** Whether a webhook subscribed to `events` wants an event of `type`. */
export function webhookWants(events: readonly string[], type: string): boolean {
  return events.includes('*') || events.includes(type);
}

/** A webhook as the API shows it: never the secret. */
export function webhookView(record: WebhookRecord): Webhook {
  return {
    webhook_id: record.webhook_id,
    url: record.url,
    events: record.events,
    description: record.description,
    created_at: record.created_at,
    disabled: record.disabled,
    disabled_reason: record.disabled_reason,
  };
}
