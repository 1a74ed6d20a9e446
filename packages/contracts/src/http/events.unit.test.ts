import { describe, expect, it } from 'vitest';
import { feedEventId, feedEventSeq, parseCreateWebhookBody, parseEventsQuery } from './events';

describe('feed event ids', () => {
  it('round-trip a stream sequence and sort as the sequence does', () => {
    const seqs = [1, 9, 10, 35, 36, 1_000, 123_456_789, Number.MAX_SAFE_INTEGER];
    const ids = seqs.map(feedEventId);
    expect(ids.map(feedEventSeq)).toEqual(seqs);
    expect([...ids].sort()).toEqual(ids);
  });

  it('are not anything else', () => {
    for (const id of ['', '12', 'evt_', 'evt_00000000000A', 'evt_0000000000001', 'xyz_000000000001']) expect(feedEventSeq(id)).toBeUndefined();
  });
});

describe('the events query', () => {
  it('prefers Last-Event-ID over after, and defaults to 100 of every type', () => {
    expect(parseEventsQuery({})).toEqual({ afterSeq: 0, after: null, limit: 100, types: undefined });
    expect(parseEventsQuery({ after: feedEventId(5) }, feedEventId(9))).toMatchObject({ afterSeq: 9, after: feedEventId(9) });
    expect(parseEventsQuery({ types: 'memo.processed, memo.deleted,memo.processed', limit: '1000' })).toMatchObject({
      limit: 1000,
      types: ['memo.processed', 'memo.deleted'],
    });
  });
});

describe('the webhook body', () => {
  it('takes https URLs only, and http too when private targets are allowed', () => {
    expect(() => parseCreateWebhookBody({ url: 'http://example.com/h', events: ['*'] }, false)).toThrow('url must use https');
    expect(parseCreateWebhookBody({ url: 'http://127.0.0.1:9/h', events: ['*'] }, true).url.href).toBe('http://127.0.0.1:9/h');
    expect(() => parseCreateWebhookBody({ url: 'ftp://example.com', events: ['*'] }, true)).toThrow('url must use https');
    expect(() => parseCreateWebhookBody({ url: 'https://u:p@example.com', events: ['*'] }, false)).toThrow('credentials');
  });

  it('takes known event types, or "*" alone', () => {
    expect(parseCreateWebhookBody({ url: 'https://example.com', events: ['memo.processed', 'memo.processed'] }, false).events).toEqual(['memo.processed']);
    expect(() => parseCreateWebhookBody({ url: 'https://example.com', events: [] }, false)).toThrow('non-empty');
    expect(() => parseCreateWebhookBody({ url: 'https://example.com', events: ['*', 'memo.created'] }, false)).toThrow('unknown event type');
    expect(() => parseCreateWebhookBody({ url: 'https://example.com', events: ['memo.nope'] }, false)).toThrow('unknown event type');
  });
});
