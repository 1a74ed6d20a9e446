import { describe, expect, it } from 'vitest';
import { parseAuditQuery, parseCreateKeyBody, parseCreateTokenBody, stampIntoSpace, withinParent } from './access';
import type { Filter } from './filters';

const user = (v: string): Filter => ({ field: 'user_id', operator: 'eq', value: v, filter_type: 'custom_metadata' });
const source = (v: string): Filter => ({ field: 'source', operator: 'eq', value: v, filter_type: 'native_field' });

describe('scoped access rules', () => {
  it('lets a child carry only its parent’s scopes and every parent filter', () => {
    const parent = { scopes: ['search', 'chat'] as const, space: [user('u1')] };
    expect(withinParent({ ...parent, scopes: [...parent.scopes] }, { scopes: ['search'], filters: [user('u1'), source('crm')] })).toBe(true);
    expect(withinParent({ ...parent, scopes: [...parent.scopes] }, { scopes: ['search', 'generate'], filters: [user('u1')] })).toBe(false);
    expect(withinParent({ ...parent, scopes: [...parent.scopes] }, { scopes: ['search'], filters: [] })).toBe(false);
    expect(withinParent({ ...parent, scopes: [...parent.scopes] }, { scopes: ['search'], filters: [user('u2')] })).toBe(false);
    // `in` lists compare element by element.
    const list: Filter = { field: 'tags', operator: 'in', value: ['a', 'b'], filter_type: 'native_field' };
    expect(withinParent({ scopes: ['search'], space: [list] }, { scopes: ['search'], filters: [{ ...list, value: ['a', 'b'] }] })).toBe(true);
    expect(withinParent({ scopes: ['search'], space: [list] }, { scopes: ['search'], filters: [{ ...list, value: ['a', 'b', 'c'] }] })).toBe(false);
  });

  it('stamps eq filters on source and metadata into a new memo and refuses one that contradicts the space', () => {
    expect(stampIntoSpace([user('u1'), source('crm')], { title: 't' })).toEqual({ source: 'crm', metadata: { user_id: 'u1' } });
    expect(stampIntoSpace([user('u1')], { title: 't', metadata: { user_id: 'u1', team: 'x' } })).toEqual({});
    expect(() => stampIntoSpace([user('u1')], { title: 't', metadata: { user_id: 'u2' } })).toThrow('Access denied');
    expect(() => stampIntoSpace([source('crm')], { title: 't', source: 'mail' })).toThrow('Access denied');
    // A space that stamping cannot satisfy (contains on the title) is checked as given.
    const titled: Filter = { field: 'title', operator: 'contains', value: 'report', filter_type: 'native_field' };
    expect(stampIntoSpace([titled], { title: 'Q3 Report' })).toEqual({});
    expect(() => stampIntoSpace([titled], { title: 'Q3 notes' })).toThrow('Access denied');
    expect(stampIntoSpace([], { title: 'anything', metadata: { user_id: 'u9' } })).toEqual({});
  });

  it('validates keys, tokens and audit queries with messages naming the field', () => {
    const now = Date.parse('2026-12-01T00:00:00Z');
    expect(parseCreateKeyBody({ name: 'k', scopes: ['search', 'search'], expires_at: '2026-12-02T00:00:00Z' }, now)).toEqual({
      name: 'k',
      scopes: ['search'],
      filters: [],
      expiresAt: '2026-12-02T00:00:00.000Z',
    });
    expect(() => parseCreateKeyBody({ name: 'k', scopes: ['search'], expires_at: '2026-11-30T00:00:00Z' }, now)).toThrow('expires_at must be in the future');
    expect(() => parseCreateKeyBody({ name: 'k', scopes: ['search'], owner: true }, now)).toThrow("Unknown field 'owner'");
    expect(() => parseCreateKeyBody({ name: 'k', scopes: ['search'], filters: [{ field: 'x' }] }, now)).toThrow("Invalid filter: filter 0 is missing 'operator'");
    expect(parseCreateTokenBody({ scopes: ['chat'], ttl_s: 60, subject: 'u42' })).toEqual({ scopes: ['chat'], filters: [], ttlS: 60, subject: 'u42' });
    expect(() => parseCreateTokenBody({ scopes: ['chat'], ttl_s: 0 })).toThrow('ttl_s must be an integer from 1 to 86400');
    expect(() => parseCreateTokenBody({ scopes: ['chat'], ttl_s: 1.5 })).toThrow('ttl_s must be');
    expect(parseAuditQuery({ after: '12-3', limit: '5', memo_id: 'ABC' })).toEqual({ after: '12-3', limit: 5, memoId: 'abc' });
    expect(parseAuditQuery({})).toEqual({ limit: 100 });
    expect(() => parseAuditQuery({ after: '1;2' })).toThrow('after must be a cursor from an earlier answer');
    expect(() => parseAuditQuery({ limit: '0' })).toThrow('limit must be an integer from 1 to 1000');
  });
});
