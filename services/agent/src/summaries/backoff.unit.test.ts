import { describe, expect, it } from 'vitest';
import { OpenAiError } from '../llm/openai';
import { parseRetryAfter } from '../llm/retryAfter';
import { MAX_SUMMARY_RETRY_AFTER_MS, summaryRetryDelayMs } from './backoff';

const policy = { backoffMs: 100, timeoutMs: 20_000 };
const limited = (retryAfterMs?: number) => new OpenAiError('429 slow down', 429, { retryAfterMs });

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-12-01T10:00:00Z');
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter(' 0.5 ', now)).toBe(500);
    expect(parseRetryAfter('Tue, 01 Dec 2026 10:00:07 GMT', now)).toBe(7_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 09:59:00 GMT', now)).toBe(0);
  });
  it('gives nothing for an absent or unreadable header', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
  });
});

describe('summaryRetryDelayMs', () => {
  it('waits what the server asked for', () => {
    expect(summaryRetryDelayMs(limited(1_000), 1, policy)).toBe(1_000);
    expect(summaryRetryDelayMs(limited(0), 2, policy)).toBe(0);
  });
  it('caps the wait at the sane maximum and at one attempt’s time', () => {
    expect(summaryRetryDelayMs(limited(3_600_000), 1, { backoffMs: 100, timeoutMs: 600_000 })).toBe(MAX_SUMMARY_RETRY_AFTER_MS);
    expect(summaryRetryDelayMs(limited(30_000), 1, { backoffMs: 100, timeoutMs: 5_000 })).toBe(5_000);
  });
  it('doubles the configured backoff when the server said nothing', () => {
    expect(summaryRetryDelayMs(limited(), 1, policy)).toBe(100);
    expect(summaryRetryDelayMs(limited(), 3, policy)).toBe(400);
    expect(summaryRetryDelayMs(new Error('cannot reach the server'), 2, policy)).toBe(200);
  });
});
