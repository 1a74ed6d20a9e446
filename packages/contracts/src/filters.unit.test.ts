import { describe, expect, it } from 'vitest';
import { MemexError } from './errors';
import { matchesFilters, parseFilters, type Filter, type FilterableMemo } from './filters';

function errorOf(input: unknown): string {
  try {
    parseFilters(input);
  } catch (e) {
    if (e instanceof MemexError) return e.message;
    throw e;
  }
  throw new Error('expected parseFilters to throw');
}

describe('parseFilters', () => {
  it('treats absent and empty as no filters', () => {
    expect(parseFilters(undefined)).toEqual([]);
    expect(parseFilters(null)).toEqual([]);
    expect(parseFilters([])).toEqual([]);
  });

  it('rejects a non-list with the spec text', () => {
    expect(errorOf({ field: 'title' })).toBe('Filters must be a list');
    expect(errorOf('title')).toBe('Filters must be a list');
  });

  it.each([
    ['a missing field', { operator: 'eq', value: 'x', filter_type: 'native_field' }, "Invalid filter: filter 0 is missing 'field'"],
    ['a missing operator', { field: 'title', value: 'x', filter_type: 'native_field' }, "Invalid filter: filter 0 is missing 'operator'"],
    ['a missing value', { field: 'title', operator: 'eq', filter_type: 'native_field' }, "Invalid filter: filter 0 is missing 'value'"],
    ['a missing filter_type', { field: 'title', operator: 'eq', value: 'x' }, "Invalid filter: filter 0 is missing 'filter_type'"],
    [
      'an unknown operator',
      { field: 'title', operator: 'like', value: 'x', filter_type: 'native_field' },
      'Invalid filter: filter 0: operator must be one of eq, neq, contains, startswith, endswith, in, not_in',
    ],
    [
      'an unknown filter_type',
      { field: 'title', operator: 'eq', value: 'x', filter_type: 'column' },
      'Invalid filter: filter 0: filter_type must be one of native_field, custom_metadata',
    ],
    [
      'an unknown native field',
      { field: 'content', operator: 'eq', value: 'x', filter_type: 'native_field' },
      'Invalid filter: filter 0: native field must be one of title, source, client_reference_id, tags',
    ],
    [
      'tags with eq',
      { field: 'tags', operator: 'eq', value: 'a', filter_type: 'native_field' },
      "Invalid filter: filter 0: a tags filter must use 'in' or 'not_in' with an array value",
    ],
    [
      'tags with a string',
      { field: 'tags', operator: 'in', value: 'a', filter_type: 'native_field' },
      "Invalid filter: filter 0: a tags filter must use 'in' or 'not_in' with an array value",
    ],
    [
      'in with a string',
      { field: 'source', operator: 'in', value: 'a', filter_type: 'native_field' },
      "Invalid filter: filter 0: operator 'in' requires an array value",
    ],
    [
      'not_in with a string',
      { field: 'team', operator: 'not_in', value: 'a', filter_type: 'custom_metadata' },
      "Invalid filter: filter 0: operator 'not_in' requires an array value",
    ],
    [
      'eq with an array',
      { field: 'title', operator: 'eq', value: ['a'], filter_type: 'native_field' },
      "Invalid filter: filter 0: operator 'eq' requires a string value",
    ],
    ['a non-object', 'title', 'Invalid filter: filter 0 must be an object with field, operator, value and filter_type'],
  ])('rejects %s', (_name, filter, text) => {
    expect(errorOf([filter])).toBe(text);
  });

  it('names the position of the bad filter', () => {
    const good = { field: 'title', operator: 'eq', value: 'x', filter_type: 'native_field' };
    expect(errorOf([good, { ...good, operator: 'nope' }])).toMatch(/^Invalid filter: filter 1:/);
  });
});

const memo = (over: Partial<FilterableMemo> = {}): FilterableMemo => ({
  title: 'Quarterly Report',
  source: 'slack',
  clientReferenceId: 'ref-1',
  tags: ['finance', 'q3'],
  metadata: { user: 'alice', score: 5, flags: ['a', 'b'], nested: { x: 1 }, nothing: null },
  ...over,
});

const f = (field: string, operator: Filter['operator'], value: string | string[], type: Filter['filter_type'] = 'native_field'): Filter => ({
  field,
  operator,
  value,
  filter_type: type,
});

describe('matchesFilters: the reference semantics', () => {
  it('eq and neq are exact and case-sensitive', () => {
    expect(matchesFilters(memo(), [f('title', 'eq', 'Quarterly Report')])).toBe(true);
    expect(matchesFilters(memo(), [f('title', 'eq', 'quarterly report')])).toBe(false);
    expect(matchesFilters(memo(), [f('title', 'neq', 'quarterly report')])).toBe(true);
    expect(matchesFilters(memo(), [f('source', 'neq', 'slack')])).toBe(false);
  });

  it('contains ignores case; startswith and endswith do not', () => {
    expect(matchesFilters(memo(), [f('title', 'contains', 'TERLY rep')])).toBe(true);
    expect(matchesFilters(memo(), [f('title', 'startswith', 'Quarter')])).toBe(true);
    expect(matchesFilters(memo(), [f('title', 'startswith', 'quarter')])).toBe(false);
    expect(matchesFilters(memo(), [f('title', 'endswith', 'Report')])).toBe(true);
    expect(matchesFilters(memo(), [f('title', 'endswith', 'report')])).toBe(false);
  });

  it('in and not_in on tags match any / none of the listed tags', () => {
    expect(matchesFilters(memo(), [f('tags', 'in', ['x', 'q3'])])).toBe(true);
    expect(matchesFilters(memo(), [f('tags', 'in', ['x'])])).toBe(false);
    expect(matchesFilters(memo(), [f('tags', 'not_in', ['x'])])).toBe(true);
    expect(matchesFilters(memo(), [f('tags', 'not_in', ['finance'])])).toBe(false);
    expect(matchesFilters(memo({ tags: [] }), [f('tags', 'in', ['finance'])])).toBe(false);
  });

  it('unset native fields match only the negative operators', () => {
    const m = memo({ source: null, clientReferenceId: null });
    expect(matchesFilters(m, [f('source', 'eq', '')])).toBe(false);
    expect(matchesFilters(m, [f('source', 'neq', 'slack')])).toBe(true);
    expect(matchesFilters(m, [f('client_reference_id', 'not_in', ['ref-1'])])).toBe(true);
    expect(matchesFilters(m, [f('client_reference_id', 'contains', '')])).toBe(false);
  });

  it('metadata: scalars by their JSON text, arrays by element, objects and null never', () => {
    expect(matchesFilters(memo(), [f('user', 'eq', 'alice', 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('score', 'eq', '5', 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('flags', 'in', ['b'], 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('flags', 'eq', 'a', 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('nested', 'contains', 'x', 'custom_metadata')])).toBe(false);
    expect(matchesFilters(memo(), [f('nothing', 'neq', 'x', 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('missing', 'eq', 'x', 'custom_metadata')])).toBe(false);
    expect(matchesFilters(memo(), [f('missing', 'not_in', ['x'], 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('toString', 'eq', 'x', 'custom_metadata')])).toBe(false);
  });

  it('combines filters with AND, and an empty list matches everything', () => {
    expect(matchesFilters(memo(), [])).toBe(true);
    expect(matchesFilters(memo(), [f('title', 'contains', 'report'), f('user', 'eq', 'alice', 'custom_metadata')])).toBe(true);
    expect(matchesFilters(memo(), [f('title', 'contains', 'report'), f('user', 'eq', 'bob', 'custom_metadata')])).toBe(false);
  });
});
