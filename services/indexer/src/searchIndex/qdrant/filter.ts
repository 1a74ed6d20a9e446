/**
 * Our filters as Qdrant filter JSON, over the payload layout both Qdrant collections share (the
 * catalog point of a memo and every chunk point of it carry the same filterable fields).
 *
 * Qdrant's documented matching rules this relies on:
 * - `match: { value }` / `match: { any }` on a keyword field holds when ANY stored value equals the
 *   value / is in the list (an array payload is checked element by element); a missing or null field
 *   holds no value, so the condition is false. Keyword matching is exact and case-sensitive.
 * - `must_not: [c]` holds when `c` is false, so it holds for a missing field as well.
 * Hence eq/in map to `must` and neq/not_in to `must_not` of the same condition, which is exactly
 * "no value matches". `match: { except }` is deliberately not used: it holds when SOME stored value is
 * outside the list (a memo with teams [red, blue] passes `except: [red]`) and never on a missing
 * field, both unlike `not_in`.
 * contains (case-insensitive substring), startswith and endswith (case-sensitive) have no exact
 * Qdrant operator (full-text match is tokenised), so they are left for the caller to evaluate.
 */
import { matchesFilters, metadataStrings, type Filter, type FilterableMemo, type NativeFilterField } from '@memex/contracts';

export type QdrantCondition =
  | { key: string; match: { value: string | number | boolean } }
  | { key: string; match: { any: string[] } }
  | { key: string; range: { lt?: number; lte?: number; gt?: number; gte?: number } }
  | { has_id: string[] }
  | QdrantFilter;

export interface QdrantFilter {
  must?: QdrantCondition[];
  must_not?: QdrantCondition[];
}

/** Payload keys of the filterable attributes, on catalog and chunk points alike. */
const PAYLOAD_FIELDS = {
  title: 'title',
  source: 'source',
  client_reference_id: 'clientReferenceId',
  tags: 'tags',
  /** Metadata as `metaToken(key, value)` strings: one per value `metadataStrings` yields. */
  metadata: 'meta',
} as const satisfies Record<NativeFilterField | 'metadata', string>;

/** The keyword payload fields filters read (each gets a keyword index). */
export const FILTER_KEYWORD_FIELDS: readonly string[] = Object.values(PAYLOAD_FIELDS);

/**
 * One metadata value as a single keyword: the key and the string together, JSON-encoded so no key
 * or value can collide with another pair. One keyword field then holds every metadata key, which
 * avoids Qdrant's payload path syntax (keys with dots, brackets or quotes) and a field per key.
 */
export function metaToken(key: string, value: string): string {
  return JSON.stringify([key, value]);
}

interface FilterPayload {
  title: string;
  /** `null` rather than absent, so `set_payload` (which merges keys) clears an old value. */
  source: string | null;
  clientReferenceId: string | null;
  tags: string[];
  meta: string[];
}

/** The filterable part of a point's payload. */
export function filterPayload(memo: FilterableMemo): FilterPayload {
  const meta: string[] = [];
  for (const [key, value] of Object.entries(memo.metadata)) {
    for (const s of metadataStrings(value)) meta.push(metaToken(key, s));
  }
  return {
    title: memo.title,
    source: memo.source,
    clientReferenceId: memo.clientReferenceId,
    tags: [...memo.tags],
    meta: [...new Set(meta)],
  };
}

/**
 * A memo view rebuilt from a payload, for evaluating filters in JS: every `filterValues` of it
 * equals that of the memo the payload was made from (metadata comes back as lists of the strings
 * `metadataStrings` gave, which `metadataStrings` maps to themselves).
 */
function memoFromPayload(payload: Record<string, unknown>): FilterableMemo {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const metadata: Record<string, string[]> = {};
  for (const token of strings(payload.meta)) {
    const [key, value] = JSON.parse(token) as [string, string];
    (metadata[key] ??= []).push(value);
  }
  return {
    title: typeof payload.title === 'string' ? payload.title : '',
    source: typeof payload.source === 'string' ? payload.source : null,
    clientReferenceId: typeof payload.clientReferenceId === 'string' ? payload.clientReferenceId : null,
    tags: strings(payload.tags),
    metadata,
  };
}

export interface TranslatedFilters {
  /** The filters Qdrant evaluates exactly (eq, neq, in, not_in), to AND into a query's filter. */
  pushed: { must: QdrantCondition[]; must_not: QdrantCondition[] };
  /** Filters Qdrant cannot evaluate exactly (contains, startswith, endswith): resolve them in JS. */
  residual: Filter[];
  /** Some filter matches no memo at all (`in []`, `eq` on a field no memo can have): skip the query. */
  matchesNothing: boolean;
}

/** Where a filter's values live in the payload, and how a filter value is spelled there. */
function target(filter: Filter): { key: string; encode: (v: string) => string } | undefined {
  if (filter.filter_type === 'custom_metadata') {
    return { key: PAYLOAD_FIELDS.metadata, encode: (v) => metaToken(filter.field, v) };
  }
  if (!Object.hasOwn(PAYLOAD_FIELDS, filter.field) || filter.field === 'metadata') return undefined;
  return { key: PAYLOAD_FIELDS[filter.field as NativeFilterField], encode: (v) => v };
}

/** Splits `filters` (ANDed) into conditions Qdrant evaluates exactly and filters left for JS. */
export function translateFilters(filters: readonly Filter[]): TranslatedFilters {
  const out: TranslatedFilters = { pushed: { must: [], must_not: [] }, residual: [], matchesNothing: false };
  for (const filter of filters) {
    const { operator } = filter;
    if (operator === 'contains' || operator === 'startswith' || operator === 'endswith') {
      out.residual.push(filter);
      continue;
    }
    const where = target(filter);
    const positive = operator === 'eq' || operator === 'in';
    // As `matchesFilter` reads the value: eq/neq compare with it as is (a list equals no string),
    // in/not_in build a Set from it (of a string: its characters). Validated filters never differ.
    const { value } = filter;
    const list = operator === 'eq' || operator === 'neq' ? (Array.isArray(value) ? [] : [value]) : [...new Set(value)];
    if (!where || list.length === 0) {
      // No stored value can match: a positive operator matches nothing, a negative one everything.
      if (positive) out.matchesNothing = true;
      continue;
    }
    const values = [...new Set(list.map(where.encode))];
    const condition: QdrantCondition =
      operator === 'eq' || operator === 'neq' || values.length === 1
        ? { key: where.key, match: { value: values[0]! } }
        : { key: where.key, match: { any: values } };
    (positive ? out.pushed.must : out.pushed.must_not).push(condition);
  }
  return out;
}

/** Whether a memo passes the residual filters, judged on its payload by `matchesFilters` itself. */
export function residualMatches(payload: Record<string, unknown>, residual: readonly Filter[]): boolean {
  return residual.length === 0 || matchesFilters(memoFromPayload(payload), residual);
}
