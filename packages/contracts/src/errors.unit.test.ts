import { describe, expect, it } from 'vitest';
import { ERRORS, MemexError, errorText, httpStatus, isErrorCode } from './errors';

describe('the error table', () => {
  it('carries the spec texts and statuses verbatim', () => {
    expect(ERRORS.InvalidIdType).toEqual({ status: 400, text: "id_type must be either 'memo_uuid' or 'reference_id'" });
    expect(ERRORS.QueryRequired).toEqual({ status: 400, text: 'Query is required' });
    expect(ERRORS.PromptRequired).toEqual({ status: 400, text: 'Prompt is required' });
    expect(ERRORS.FiltersNotList).toEqual({ status: 400, text: 'Filters must be a list' });
    expect(ERRORS.InvalidSearchMethod.text).toBe(
      'Search method is required and must be one of: title_contains, title_startswith, chunk_vector_search',
    );
    expect(ERRORS.LimitTooHigh).toEqual({ status: 400, text: 'Limit must be less than or equal to 50' });
    expect(ERRORS.ResourceNotInProject).toEqual({ status: 403, text: 'Resource does not belong to the project' });
    expect(ERRORS.AccessDenied).toEqual({ status: 403, text: 'Access denied' });
    expect(ERRORS.MemoNotFound).toEqual({ status: 404, text: 'Memo not found' });
    expect(ERRORS.RateLimited).toEqual({ status: 429, text: 'Rate limit exceeded' });
    expect(httpStatus('MissingApiKey')).toBe(401);
    expect(httpStatus('InvalidApiKey')).toBe(403);
  });

  it('puts details after the spec prefix where the spec shows one', () => {
    expect(errorText('InvalidFilter', "filter 0 is missing 'field'")).toBe("Invalid filter: filter 0 is missing 'field'");
    expect(errorText('AgentError', 'model not found')).toBe('Agent error: model not found');
    expect(errorText('InvalidRequest', 'Title is required')).toBe('Title is required');
    expect(errorText('MemoNotFound', 'ignored detail')).toBe('Memo not found');
  });

  it('round-trips over the wire and degrades unknown codes to Internal', () => {
    const e = new MemexError('InvalidFilter', 'bad');
    expect(MemexError.fromWire(e.toWire())).toMatchObject({ code: 'InvalidFilter', message: 'Invalid filter: bad', status: 400 });
    expect(MemexError.fromWire({ code: 'NoSuchCode' }).code).toBe('Internal');
    expect(isErrorCode('MemoNotFound')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });

  it('keeps every status in the 4xx/5xx ranges', () => {
    for (const { status } of Object.values(ERRORS)) expect(status).toBeGreaterThanOrEqual(400);
  });
});
