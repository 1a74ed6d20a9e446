import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { MemexError } from '../errors';
import { ChatBody, GenerateBody } from './chat';
import { CreateMemoBody, UpdateMemoBody } from './memo';
import { SearchBody } from './search';
import {
  MAX_CONTENT_BYTES,
  parseChatBody,
  parseChatListQuery,
  parseCreateMemoBody,
  parseDateTime,
  parseGenerateBody,
  parseIdType,
  parseSearchBody,
  parseUpdateMemoBody,
  isUuid,
} from './validation';

// The formats the schemas name, checked the way the parse functions check them.
FormatRegistry.Set('date-time', (v) => parseDateTime(v) !== undefined);
FormatRegistry.Set('uuid', (v) => isUuid(v));

function error(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof MemexError) return e.message;
    throw e;
  }
  throw new Error('expected a MemexError');
}

const filter = { field: 'source', operator: 'eq', value: 'slack', filter_type: 'native_field' };

describe('request validation', () => {
  it('reads id_type with its default and the spec text', () => {
    expect(parseIdType(undefined)).toBe('memo_uuid');
    expect(parseIdType('reference_id')).toBe('reference_id');
    expect(error(() => parseIdType('uuid'))).toBe("id_type must be either 'memo_uuid' or 'reference_id'");
    expect(error(() => parseIdType(['memo_uuid']))).toBe("id_type must be either 'memo_uuid' or 'reference_id'");
  });

  it('normalises a create body and fills defaults', () => {
    expect(parseCreateMemoBody({ title: 'T', content: 'C', tags: [' a ', 'a', 'b'], expiration_date: '2030-01-02' })).toEqual({
      title: 'T',
      content: 'C',
      metadata: {},
      referenceId: null,
      tags: ['a', 'b'],
      source: null,
      type: 'text',
      expirationDate: '2030-01-02T00:00:00.000Z',
    });
  });

  it.each([
    [{ content: 'c' }, 'Title is required'],
    [{ title: '  ', content: 'c' }, 'Title is required'],
    [{ title: 't' }, 'Content is required'],
    [{ title: 't', content: '   ' }, 'Content is required'],
    [{ title: 't', content: 'c', metadata: null }, 'metadata must be a JSON object'],
    [{ title: 't', content: 'c', tags: [''] }, 'tags must be non-empty strings'],
    [{ title: 't', content: 'c', type: 'has space' }, 'type must be 1-64 letters, digits or _ . : -'],
    [{ title: 't', content: 'c', expiration_date: 'tomorrow' }, 'expiration_date must be an ISO 8601 date-time'],
    [{ title: 't', content: 'c', extra: 1 }, "Unknown field: 'extra'"],
    ['a string', 'Request body must be a JSON object'],
  ])('refuses the create body %j with "%s"', (body, text) => {
    expect(error(() => parseCreateMemoBody(body))).toBe(text);
  });

  it('limits content by its size in UTF-8 and answers 413 above it', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as MemexError).code;
      }
      return undefined;
    };
    expect(() => parseCreateMemoBody({ title: 't', content: 'x'.repeat(MAX_CONTENT_BYTES) })).not.toThrow();
    expect(code(() => parseCreateMemoBody({ title: 't', content: 'x'.repeat(MAX_CONTENT_BYTES + 1) }))).toBe('PayloadTooLarge');
    // Measured in UTF-8: 'é' is two bytes.
    expect(code(() => parseCreateMemoBody({ title: 't', content: 'é'.repeat(600) }, { maxContentBytes: 1000 }))).toBe('PayloadTooLarge');
    expect(() => parseUpdateMemoBody({ content: 'é'.repeat(500) }, { maxContentBytes: 1000 })).not.toThrow();
  });

  it('keeps only the fields an update names, and lets null clear the optional ones', () => {
    expect(parseUpdateMemoBody({})).toEqual({});
    expect(parseUpdateMemoBody({ source: null, client_reference_id: null, expiration_date: null })).toEqual({
      source: null,
      clientReferenceId: null,
      expirationDate: null,
    });
    expect(error(() => parseUpdateMemoBody({ title: '' }))).toBe('title must not be empty');
    expect(error(() => parseUpdateMemoBody({ reference_id: 'x' }))).toBe("Unknown field: 'reference_id'");
    expect(error(() => parseUpdateMemoBody({ content: null }))).toBe('content must be a string');
  });

  it('checks search bodies in the order the spec lists its errors', () => {
    expect(error(() => parseSearchBody({ search_method: 'nope', limit: 99 }))).toBe('Query is required');
    expect(error(() => parseSearchBody({ query: 'q', limit: 99 }))).toBe(
      'Search method is required and must be one of: title_contains, title_startswith, chunk_vector_search',
    );
    expect(error(() => parseSearchBody({ query: 'q', search_method: 'title_contains', limit: 51 }))).toBe('Limit must be less than or equal to 50');
    expect(error(() => parseSearchBody({ query: 'q', search_method: 'title_contains', limit: 0 }))).toBe('Limit must be greater than or equal to 1');
    expect(error(() => parseSearchBody({ query: 'q', search_method: 'title_contains', limit: 2.5 }))).toBe('Limit must be an integer from 1 to 50');
    expect(error(() => parseSearchBody({ query: 'q', search_method: 'title_contains', filters: {} }))).toBe('Filters must be a list');
    expect(error(() => parseSearchBody({ query: 'q', search_method: 'title_contains', project_id: 'x' }))).toBe('project_id must be a UUID');
    expect(parseSearchBody({ query: 'q', search_method: 'chunk_vector_search' })).toMatchObject({ limit: 10, filters: [] });
  });

  it('checks chat and generate bodies', () => {
    expect(error(() => parseChatBody({ filters: [] }))).toBe('Query is required');
    expect(error(() => parseChatBody({ query: 'q', filters: 'x' }))).toBe('Filters must be a list');
    expect(error(() => parseChatBody({ query: 'q', stream: 'yes' }))).toBe('stream must be a boolean');
    expect(error(() => parseChatBody({ query: 'q', chat_id: 'not-a-uuid' }))).toBe('Chat not found');
    expect(error(() => parseGenerateBody({ rules: 'r' }))).toBe('Prompt is required');
    expect(parseGenerateBody({ prompt: 'p', stream: true, filters: [filter] })).toMatchObject({ prompt: 'p', stream: true, filters: [filter] });
  });

  it('reads chat list paging with defaults and bounds', () => {
    expect(parseChatListQuery({})).toEqual({ page: 1, pageSize: 20 });
    expect(parseChatListQuery({ page: '3', page_size: '100' })).toEqual({ page: 3, pageSize: 100 });
    expect(error(() => parseChatListQuery({ page_size: '101' }))).toBe('page_size must be less than or equal to 100');
    expect(error(() => parseChatListQuery({ page: '0' }))).toBe('page must be an integer greater than or equal to 1');
    expect(error(() => parseChatListQuery({ page: 'two' }))).toBe('page must be an integer greater than or equal to 1');
  });

  it('parses ISO 8601 dates and date-times, and refuses impossible ones', () => {
    expect(parseDateTime('2025-03-01T10:20:30+02:00')).toBe('2025-03-01T08:20:30.000Z');
    expect(parseDateTime('2025-03-01 10:20')).toBe('2025-03-01T10:20:00.000Z');
    expect(parseDateTime('2024-02-29')).toBe('2024-02-29T00:00:00.000Z');
    expect(parseDateTime('2025-02-29')).toBeUndefined();
    expect(parseDateTime('2025-13-01')).toBeUndefined();
    expect(parseDateTime('01/02/2025')).toBeUndefined();
  });

  it('accepts only bodies that also pass their published schemas', () => {
    const accepted: [unknown, Parameters<typeof Value.Check>[0]][] = [
      [{ title: 'T', content: 'C', metadata: { a: 1 }, reference_id: 'r', tags: ['x'], source: 's', type: 'note', expiration_date: '2030-01-01T00:00:00Z' }, CreateMemoBody],
      [{ title: 'T', metadata: {}, client_reference_id: null, source: null, expiration_date: null, content: 'C' }, UpdateMemoBody],
      [{ query: 'q', limit: 5, filters: [filter], search_method: 'title_startswith', project_id: '00000000-0000-4000-8000-000000000001' }, SearchBody],
      [{ query: 'q', stream: true, system_prompt: 's', filters: [filter], chat_id: '00000000-0000-4000-8000-000000000002' }, ChatBody],
      [{ prompt: 'p', rules: 'r', stream: false, filters: [] }, GenerateBody],
    ];
    const parsers = [parseCreateMemoBody, parseUpdateMemoBody, parseSearchBody, parseChatBody, parseGenerateBody];
    accepted.forEach(([body, schema], i) => {
      expect(() => parsers[i]!(body)).not.toThrow();
      expect([...Value.Errors(schema, body)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
    });
  });
});
