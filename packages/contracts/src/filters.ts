import { Type, type Static } from '@sinclair/typebox';
import { MemexError } from './errors';

export const FILTER_OPERATORS = ['eq', 'neq', 'contains', 'startswith', 'endswith', 'in', 'not_in'] as const;
export const FILTER_TYPES = ['native_field', 'custom_metadata'] as const;
export const NATIVE_FILTER_FIELDS = ['title', 'source', 'client_reference_id', 'tags'] as const;

export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export type FilterType = (typeof FILTER_TYPES)[number];
export type NativeFilterField = (typeof NATIVE_FILTER_FIELDS)[number];

export const Filter = Type.Object(
  {
    field: Type.String({ description: 'title, source, client_reference_id or tags; or a metadata key' }),
    operator: Type.Union(FILTER_OPERATORS.map((op) => Type.Literal(op))),
    value: Type.Union([Type.String(), Type.Array(Type.String())]),
    filter_type: Type.Union(FILTER_TYPES.map((t) => Type.Literal(t))),
  },
  { $id: 'Filter' },
);
export type Filter = Static<typeof Filter>;

export const Filters = Type.Array(Filter, { description: 'ANDed; an empty list means the whole project' });

const OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);
const NATIVE_FIELDS: ReadonlySet<string> = new Set(NATIVE_FILTER_FIELDS);
const LIST_OPERATORS: ReadonlySet<string> = new Set(['in', 'not_in']);

/** Most filters one request may carry, and most values one `in` list may name. */
export const MAX_FILTERS = 32;
export const MAX_FILTER_VALUES = 1000;
/** Largest total size of a request's filters (fields and values, UTF-8 bytes). */
export const MAX_FILTERS_BYTES = 64 * 1024;

function invalid(detail: string): MemexError {
  return new MemexError('InvalidFilter', detail);
}

/**
 * Checks one filter against the rules of the spec (section 2.8) and returns it typed; throws
 * `InvalidFilter` with the specific reason otherwise.
 */
export function parseFilter(input: unknown, position: number): Filter {
  const at = `filter ${position}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(`${at} must be an object with field, operator, value and filter_type`);
  }
  const raw = input as Record<string, unknown>;
  for (const key of ['field', 'operator', 'value', 'filter_type'] as const) {
    if (raw[key] === undefined || raw[key] === null) throw invalid(`${at} is missing '${key}'`);
  }
  for (const key of Object.keys(raw)) {
    if (!['field', 'operator', 'value', 'filter_type'].includes(key)) throw invalid(`${at} has unknown key '${key}'`);
  }
  const { field, operator, value, filter_type: filterType } = raw;
  if (typeof field !== 'string' || field.length === 0) throw invalid(`${at}: 'field' must be a non-empty string`);
  if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
    throw invalid(`${at}: operator must be one of ${FILTER_OPERATORS.join(', ')}`);
  }
  if (filterType !== 'native_field' && filterType !== 'custom_metadata') {
    throw invalid(`${at}: filter_type must be one of ${FILTER_TYPES.join(', ')}`);
  }
  if (filterType === 'native_field' && !NATIVE_FIELDS.has(field)) {
    throw invalid(`${at}: native field must be one of ${NATIVE_FILTER_FIELDS.join(', ')}`);
  }
  const isList = LIST_OPERATORS.has(operator);
  if (filterType === 'native_field' && field === 'tags') {
    if (!isList || !Array.isArray(value)) {
      throw invalid(`${at}: a tags filter must use 'in' or 'not_in' with an array value`);
    }
  }
  if (isList) {
    if (!Array.isArray(value)) throw invalid(`${at}: operator '${operator}' requires an array value`);
    if (value.length > MAX_FILTER_VALUES) throw invalid(`${at}: at most ${MAX_FILTER_VALUES} values`);
    if (!value.every((v) => typeof v === 'string')) throw invalid(`${at}: array values must be strings`);
  } else if (typeof value !== 'string') {
    throw invalid(`${at}: operator '${operator}' requires a string value`);
  }
  return {
    field,
    operator: operator as FilterOperator,
    value: isList ? [...(value as string[])] : (value as string),
    filter_type: filterType,
  };
}

/**
 * Validates a request's `filters`. `undefined` and `null` mean no filters. A value that is not a
 * list throws `FiltersNotList`; a bad element throws `InvalidFilter` with the reason.
 */
export function parseFilters(input: unknown): Filter[] {
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input)) throw new MemexError('FiltersNotList');
  if (input.length > MAX_FILTERS) throw invalid(`at most ${MAX_FILTERS} filters are allowed`);
  const filters = input.map((f, i) => parseFilter(f, i));
  let bytes = 0;
  for (const f of filters) {
    bytes += Buffer.byteLength(f.field);
    for (const v of Array.isArray(f.value) ? f.value : [f.value]) bytes += Buffer.byteLength(v);
  }
  if (bytes > MAX_FILTERS_BYTES) throw invalid(`filters must be at most ${MAX_FILTERS_BYTES} bytes of fields and values in all`);
  return filters;
}

/** The attributes of a memo that filters look at. */
export interface FilterableMemo {
  title: string;
  source: string | null;
  clientReferenceId: string | null;
  tags: readonly string[];
  metadata: Record<string, unknown>;
}

/**
 * The values a filter compares against, as strings. A native text field has one value (none when
 * unset); tags have one per tag. A metadata value that is a string, number or boolean has one (its
 * JSON text for numbers and booleans: 5 → "5", true → "true"); an array has one per such element;
 * null, objects and missing keys have none.
 */
export function filterValues(memo: FilterableMemo, filter: Pick<Filter, 'field' | 'filter_type'>): string[] {
  if (filter.filter_type === 'native_field') {
    switch (filter.field as NativeFilterField) {
      case 'title':
        return [memo.title];
      case 'source':
        return memo.source === null ? [] : [memo.source];
      case 'client_reference_id':
        return memo.clientReferenceId === null ? [] : [memo.clientReferenceId];
      case 'tags':
        return [...memo.tags];
      default:
        return [];
    }
  }
  if (!Object.hasOwn(memo.metadata, filter.field)) return [];
  return metadataStrings(memo.metadata[filter.field]);
}

export function metadataStrings(value: unknown): string[] {
  const one = (v: unknown): string | undefined =>
    typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : undefined;
  if (Array.isArray(value)) return value.map(one).filter((v): v is string => v !== undefined);
  const single = one(value);
  return single === undefined ? [] : [single];
}

/**
 * The reference semantics every backend must reproduce exactly (the filter contract suites compare
 * against this). Positive operators match when ANY value matches; `neq` and `not_in` match when NO
 * value does, so a memo without the field matches them. `contains` compares lower-cased strings;
 * `startswith` and `endswith` are case-sensitive.
 */
export function matchesFilter(memo: FilterableMemo, filter: Filter): boolean {
  const values = filterValues(memo, filter);
  const v = filter.value;
  switch (filter.operator) {
    case 'eq':
      return values.some((x) => x === v);
    case 'neq':
      return !values.some((x) => x === v);
    case 'contains': {
      const needle = String(v).toLowerCase();
      return values.some((x) => x.toLowerCase().includes(needle));
    }
    case 'startswith':
      return values.some((x) => x.startsWith(String(v)));
    case 'endswith':
      return values.some((x) => x.endsWith(String(v)));
    case 'in': {
      const set = new Set(v as string[]);
      return values.some((x) => set.has(x));
    }
    case 'not_in': {
      const set = new Set(v as string[]);
      return !values.some((x) => set.has(x));
    }
    default: {
      const never: never = filter.operator;
      throw new Error(`unknown operator ${String(never)}`);
    }
  }
}

export function matchesFilters(memo: FilterableMemo, filters: readonly Filter[]): boolean {
  return filters.every((f) => matchesFilter(memo, f));
}
