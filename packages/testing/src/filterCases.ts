import type { Filter, FilterableMemo } from '@memex/contracts';
import { pick, seededRandom } from './random';

export interface GeneratedMemo extends FilterableMemo {
  key: string;
}

const WORDS = ['Alpha', 'alpha', 'Beta', 'GAMMA', 'delta', 'Ärger', 'äpfel', 'Zeta', 'report', 'Report', 'notes', 'Q3'];
const SOURCES = ['slack', 'Slack', 'email', 'drive', 'crm-sync'];
const TAGS = ['finance', 'Finance', 'q3', 'legal', 'hr', 'urgent'];
const USERS = ['alice', 'Alice', 'bob', 'carol'];

/**
 * Memos with overlapping, differently-cased values so every operator has matches and near misses:
 * unset sources and reference ids, numeric, boolean and list metadata, keys missing on some memos.
 */
export function generateFilterMemos(count: number, seed = 42): GeneratedMemo[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const title = `${pick(random, WORDS)} ${pick(random, WORDS)} ${i}`;
    const metadata: Record<string, unknown> = {};
    if (random() < 0.8) metadata.user = pick(random, USERS);
    if (random() < 0.5) metadata.score = Math.floor(random() * 4);
    if (random() < 0.3) metadata.public = random() < 0.5;
    if (random() < 0.4) metadata.teams = [pick(random, ['red', 'blue', 'green']), pick(random, ['red', 'blue', 'green'])];
    if (random() < 0.1) metadata.nested = { user: 'alice' };
    return {
      key: `m${i}`,
      title,
      source: random() < 0.8 ? pick(random, SOURCES) : null,
      clientReferenceId: random() < 0.7 ? `ref-${i % 7}-${pick(random, ['x', 'Y'])}` : null,
      tags: [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => pick(random, TAGS)))],
      metadata,
    };
  });
}

const nativeText = (field: 'title' | 'source' | 'client_reference_id', operator: Filter['operator'], value: string | string[]): Filter => ({
  field,
  operator,
  value,
  filter_type: 'native_field',
});
const meta = (field: string, operator: Filter['operator'], value: string | string[]): Filter => ({
  field,
  operator,
  value,
  filter_type: 'custom_metadata',
});
const tags = (operator: 'in' | 'not_in', value: string[]): Filter => ({ field: 'tags', operator, value, filter_type: 'native_field' });

/**
 * Filter lists covering every operator on every native field and on metadata, tags in/not_in,
 * AND of several, and the empty list, with values taken from `memos` so each has matches and near
 * misses. Each backend must return exactly what `matchesFilters` says.
 */
export function filterCases(memos: readonly GeneratedMemo[]): { name: string; filters: Filter[] }[] {
  const cases: { name: string; filters: Filter[] }[] = [{ name: 'no filters', filters: [] }];
  const at = (i: number) => memos[i % memos.length]!;
  const firstWord = (s: string) => s.split(' ')[0]!;
  const textValues: Record<'title' | 'source' | 'client_reference_id', { eq: string; part: string; start: string; end: string; list: string[] }> = {
    title: {
      eq: at(3).title,
      part: 'äRG',
      start: firstWord(at(1).title),
      end: at(4).title.slice(-2),
      list: [at(2).title, at(5).title, 'no such title'],
    },
    source: { eq: 'slack', part: 'LAC', start: 'cr', end: 'ail', list: ['slack', 'drive'] },
    client_reference_id: { eq: 'ref-1-x', part: '-Y', start: 'ref-2', end: 'x', list: ['ref-1-x', 'ref-3-Y'] },
  };
  for (const field of ['title', 'source', 'client_reference_id'] as const) {
    const v = textValues[field];
    cases.push(
      { name: `${field} eq`, filters: [nativeText(field, 'eq', v.eq)] },
      { name: `${field} eq wrong case`, filters: [nativeText(field, 'eq', v.eq.toUpperCase())] },
      { name: `${field} neq`, filters: [nativeText(field, 'neq', v.eq)] },
      { name: `${field} contains (case-insensitive)`, filters: [nativeText(field, 'contains', v.part)] },
      { name: `${field} startswith (case-sensitive)`, filters: [nativeText(field, 'startswith', v.start)] },
      { name: `${field} startswith wrong case`, filters: [nativeText(field, 'startswith', v.start.toUpperCase())] },
      { name: `${field} endswith`, filters: [nativeText(field, 'endswith', v.end)] },
      { name: `${field} in`, filters: [nativeText(field, 'in', v.list)] },
      { name: `${field} not_in`, filters: [nativeText(field, 'not_in', v.list)] },
    );
  }
  cases.push(
    { name: 'tags in', filters: [tags('in', ['finance', 'legal'])] },
    { name: 'tags in (case matters)', filters: [tags('in', ['FINANCE'])] },
    { name: 'tags not_in', filters: [tags('not_in', ['q3'])] },
    { name: 'tags in empty list', filters: [tags('in', [])] },
    { name: 'tags not_in empty list', filters: [tags('not_in', [])] },
    { name: 'metadata eq', filters: [meta('user', 'eq', 'alice')] },
    { name: 'metadata neq', filters: [meta('user', 'neq', 'alice')] },
    { name: 'metadata contains', filters: [meta('user', 'contains', 'LIC')] },
    { name: 'metadata startswith', filters: [meta('user', 'startswith', 'A')] },
    { name: 'metadata endswith', filters: [meta('user', 'endswith', 'ol')] },
    { name: 'metadata in', filters: [meta('user', 'in', ['bob', 'carol'])] },
    { name: 'metadata not_in', filters: [meta('user', 'not_in', ['bob', 'carol'])] },
    { name: 'metadata number eq', filters: [meta('score', 'eq', '2')] },
    { name: 'metadata boolean eq', filters: [meta('public', 'eq', 'true')] },
    { name: 'metadata list in', filters: [meta('teams', 'in', ['green'])] },
    { name: 'metadata list not_in', filters: [meta('teams', 'not_in', ['red'])] },
    { name: 'metadata object never matches', filters: [meta('nested', 'contains', 'alice')] },
    { name: 'metadata missing key neq', filters: [meta('absent', 'neq', 'x')] },
    { name: 'metadata missing key eq', filters: [meta('absent', 'eq', 'x')] },
    {
      name: 'AND of three',
      filters: [nativeText('source', 'neq', 'email'), tags('not_in', ['hr']), meta('user', 'contains', 'a')],
    },
    { name: 'AND that excludes everything', filters: [meta('user', 'eq', 'alice'), meta('user', 'eq', 'bob')] },
  );
  return cases;
}
