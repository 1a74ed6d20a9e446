import { describe, expect, it } from 'vitest';
import { matchesFilters, type Filter, type FilterableMemo } from '@memex/contracts';
import { filterCases, generateFilterMemos } from '@memex/testing';
import { filterPayload, metaToken, residualMatches, translateFilters, type QdrantCondition, type QdrantFilter } from './filter';

type Value = string | string[];
const native = (field: string, operator: Filter['operator'], value: Value): Filter => ({ field, operator, value, filter_type: 'native_field' });
const meta = (field: string, operator: Filter['operator'], value: Value): Filter => ({ field, operator, value, filter_type: 'custom_metadata' });

type Payload = Record<string, unknown>;

/**
 * Qdrant's documented payload matching, for the conditions we send: `match.value` / `match.any` hold
 * when any stored value (each element of an array) equals / is in the list, and never on a missing
 * or null field; `match.except` holds when some stored value is outside the list, and never on a
 * missing or null field; `must` needs all, `must_not` none.
 */
function stored(payload: Payload, key: string): unknown[] {
  const v = payload[key];
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

type SimCondition = QdrantCondition | { key: string; match: { except: string[] } };

function holds(condition: SimCondition, payload: Payload): boolean {
  if ('has_id' in condition) throw new Error('has_id is not simulated');
  if ('key' in condition) {
    const values = stored(payload, condition.key);
    if ('range' in condition) throw new Error('range is not simulated');
    const { match } = condition;
    if ('value' in match) return values.some((v) => v === match.value);
    if ('any' in match) return values.some((v) => match.any.includes(v as string));
    return values.some((v) => !match.except.includes(v as string));
  }
  return qdrantMatches(condition, payload);
}

function qdrantMatches(filter: QdrantFilter, payload: Payload): boolean {
  return (filter.must ?? []).every((c) => holds(c, payload)) && !(filter.must_not ?? []).some((c) => holds(c, payload));
}

/** What the adapter finds for a memo: nothing if the filters match nothing, else Qdrant's filter AND the residual in JS. */
function adapterMatches(memo: FilterableMemo, filters: readonly Filter[]): boolean {
  const { pushed, residual, matchesNothing } = translateFilters(filters);
  // The payload as Qdrant stores and returns it (JSON).
  const payload = JSON.parse(JSON.stringify(filterPayload(memo))) as Payload;
  return !matchesNothing && qdrantMatches(pushed, payload) && residualMatches(payload, residual);
}

describe('translateFilters', () => {
  it('pushes eq/in down as must and neq/not_in as must_not of the same condition', () => {
    expect(translateFilters([native('title', 'eq', 'Alpha 1')])).toEqual({
      pushed: { must: [{ key: 'title', match: { value: 'Alpha 1' } }], must_not: [] },
      residual: [],
      matchesNothing: false,
    });
    expect(translateFilters([native('source', 'neq', 'slack')]).pushed).toEqual({
      must: [],
      must_not: [{ key: 'source', match: { value: 'slack' } }],
    });
    expect(translateFilters([native('client_reference_id', 'in', ['a', 'b', 'a'])]).pushed).toEqual({
      must: [{ key: 'clientReferenceId', match: { any: ['a', 'b'] } }],
      must_not: [],
    });
    expect(translateFilters([native('tags', 'not_in', ['q3', 'hr'])]).pushed).toEqual({
      must: [],
      must_not: [{ key: 'tags', match: { any: ['q3', 'hr'] } }],
    });
    expect(translateFilters([native('tags', 'in', ['q3'])]).pushed.must).toEqual([{ key: 'tags', match: { value: 'q3' } }]);
  });

  it('spells metadata as key/value tokens in one keyword field', () => {
    expect(translateFilters([meta('user', 'eq', 'alice'), meta('a.b"c', 'not_in', ['1', 'true'])]).pushed).toEqual({
      must: [{ key: 'meta', match: { value: '["user","alice"]' } }],
      must_not: [{ key: 'meta', match: { any: ['["a.b\\"c","1"]', '["a.b\\"c","true"]'] } }],
    });
    const metadata = { n: 5, b: false, l: ['x', 2, null, { o: 1 }], o: { x: 1 }, z: null };
    expect(filterPayload({ title: 't', source: null, clientReferenceId: null, tags: [], metadata }).meta).toEqual([
      metaToken('n', '5'),
      metaToken('b', 'false'),
      metaToken('l', 'x'),
      metaToken('l', '2'),
    ]);
  });

  it('leaves contains, startswith and endswith to be evaluated on the catalog', () => {
    const filters = [
      native('title', 'contains', 'äRG'),
      native('source', 'startswith', 'cr'),
      meta('user', 'endswith', 'ol'),
      native('title', 'eq', 'x'),
    ];
    const { pushed, residual } = translateFilters(filters);
    expect(residual).toEqual(filters.slice(0, 3));
    expect(pushed.must).toEqual([{ key: 'title', match: { value: 'x' } }]);
  });

  it('knows when a filter matches nothing or everything without asking Qdrant', () => {
    expect(translateFilters([native('tags', 'in', [])]).matchesNothing).toBe(true);
    expect(translateFilters([native('tags', 'not_in', [])])).toEqual({ pushed: { must: [], must_not: [] }, residual: [], matchesNothing: false });
    expect(translateFilters([native('nonexistent', 'eq', 'x')]).matchesNothing).toBe(true);
    expect(translateFilters([native('nonexistent', 'neq', 'x')]).pushed).toEqual({ must: [], must_not: [] });
    expect(translateFilters([]).matchesNothing).toBe(false);
  });
});

describe('Qdrant filter semantics agree with matchesFilters', () => {
  for (const [count, seed] of [
    [60, 5],
    [200, 42],
    [200, 7],
  ] as const) {
    const memos = generateFilterMemos(count, seed);
    it(`on every filter case over ${count} generated memos (seed ${seed})`, () => {
      for (const { name, filters } of filterCases(memos)) {
        const expected = memos.filter((m) => matchesFilters(m, filters)).map((m) => m.key);
        const actual = memos.filter((m) => adapterMatches(m, filters)).map((m) => m.key);
        expect(actual, name).toEqual(expected);
      }
    });
  }

  it('on awkward values: odd keys, empty strings, numbers and booleans in lists, null, objects', () => {
    const memos: FilterableMemo[] = [
      { title: '', source: '', clientReferenceId: null, tags: [''], metadata: { '': 'x', 'a.b': 'y', '[0]': ['1', 1, true] } },
      { title: 'T', source: null, clientReferenceId: '', tags: [], metadata: { 'a.b': null, '[0]': { x: 1 }, n: 1.5 } },
      { title: 't', source: 'S', clientReferenceId: 'c', tags: ['x', 'y'], metadata: { n: [1.5, '1.5'], '': [] } },
    ];
    const filters: Filter[][] = [
      [native('title', 'eq', '')],
      [native('source', 'neq', '')],
      [native('client_reference_id', 'in', ['', 'c'])],
      [native('client_reference_id', 'not_in', [''])],
      [native('tags', 'in', [''])],
      [native('tags', 'not_in', ['x'])],
      [meta('', 'eq', 'x')],
      [meta('', 'neq', 'x')],
      [meta('a.b', 'in', ['y'])],
      [meta('a.b', 'not_in', ['y'])],
      [meta('[0]', 'eq', '1')],
      [meta('[0]', 'eq', 'true')],
      [meta('[0]', 'not_in', ['1'])],
      [meta('n', 'eq', '1.5')],
      [meta('n', 'contains', '.5')],
      [meta('n', 'startswith', '1')],
      [native('title', 'contains', '')],
      [native('title', 'endswith', '')],
      [native('source', 'startswith', 's')],
      [native('title', 'eq', 'T'), meta('n', 'neq', '2')],
    ];
    for (const f of filters) {
      const expected = memos.map((m) => matchesFilters(m, f));
      expect(
        memos.map((m) => adapterMatches(m, f)),
        JSON.stringify(f),
      ).toEqual(expected);
    }
  });

  it('would go wrong with match.except, which is why not_in is a must_not of match.any', () => {
    const teams: FilterableMemo = { title: 't', source: null, clientReferenceId: null, tags: [], metadata: { teams: ['red', 'blue'] } };
    const none: FilterableMemo = { title: 't', source: null, clientReferenceId: null, tags: [], metadata: {} };
    const filter = meta('teams', 'not_in', ['red']);
    const except = { must: [{ key: 'meta', match: { except: [metaToken('teams', 'red')] } }] } as unknown as QdrantFilter;
    const payload = (m: FilterableMemo) => filterPayload(m) as unknown as Payload;
    // A list holding the excluded value, and a memo without the key.
    expect([matchesFilters(teams, [filter]), matchesFilters(none, [filter])]).toEqual([false, true]);
    expect([adapterMatches(teams, [filter]), adapterMatches(none, [filter])]).toEqual([false, true]);
    expect([qdrantMatches(except, payload(teams)), qdrantMatches(except, { title: 't' })]).toEqual([true, false]);
  });
});
