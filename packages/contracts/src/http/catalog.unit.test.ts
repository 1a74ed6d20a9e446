import { describe, expect, it } from 'vitest';
import { MemexError } from '../errors';
import { parseMemoListQuery } from './catalog';

function refusal(query: Record<string, unknown>): MemexError {
  try {
    parseMemoListQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(MemexError);
    return error as MemexError;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('parseMemoListQuery', () => {
  it('defaults to page 1 of 20 without filters', () => {
    expect(parseMemoListQuery({})).toEqual({ page: 1, pageSize: 20, filters: [] });
  });

  it('reads page, page_size and filters given as a JSON array', () => {
    const filters = [{ field: 'tags', operator: 'in', value: ['a'], filter_type: 'native_field' }];
    expect(parseMemoListQuery({ page: '3', page_size: '100', filters: JSON.stringify(filters) })).toEqual({ page: 3, pageSize: 100, filters });
  });

  it('refuses bad page and page_size with 400', () => {
    for (const query of [{ page: '0' }, { page: '-1' }, { page: 'x' }, { page_size: '0' }, { page_size: '101' }, { page: '1.5' }]) {
      expect(refusal(query).status, JSON.stringify(query)).toBe(400);
    }
    expect(refusal({ page_size: '101' }).message).toBe('page_size must be less than or equal to 100');
  });

  it('refuses filters that are not JSON, not a list, or not valid filters', () => {
    expect(refusal({ filters: 'nope' }).message).toMatch(/JSON array/);
    expect(refusal({ filters: '{}' }).code).toBe('FiltersNotList');
    expect(refusal({ filters: '[{"field":"title"}]' }).code).toBe('InvalidFilter');
    expect(refusal({ filters: ['[]', '[]'] }).message).toMatch(/once/);
  });
});
