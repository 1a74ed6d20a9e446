import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedEvent } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { multipart } from '../support/multipart';
import { listenHttps } from '../support/httpsListener';
import { startStack, type Stack } from '../support/stack';

interface Page {
  events: FeedEvent[];
  next: string | null;
}

/** Reads an SSE response until `count` events came (or `timeoutMs`), keeping the raw text too. */
function readEventStream(url: string, ca: string, key: string, headers: Record<string, string>, count: number, timeoutMs = 10_000) {
  return new Promise<{ status: number; contentType: string; text: string; events: { id: string; data: FeedEvent }[] }>((resolve, reject) => {
    const req = request(url, { ca, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers } }, (res) => {
      let text = '';
      const events: { id: string; data: FeedEvent }[] = [];
      const finish = () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), text, events });
      };
      const timer = setTimeout(finish, timeoutMs);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        events.length = 0;
        for (const block of text.split('\n\n')) {
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id && data) events.push({ id, data: JSON.parse(data) as FeedEvent });
        }
        if (events.length >= count) finish();
      });
      res.on('end', finish);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the public event feed over HTTPS', () => {
  let stack: Stack;
  let https: { url: string; ca: string; close(): Promise<void> };
  let key: string;
  let projectId: string;
  let otherKey: string;

  beforeAll(async () => {
    stack = await startStack({ extractor: true });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key, projectId } = await stack.project('feed'));
    ({ key: otherKey } = await stack.project('other'));
  }, 60_000);
  afterAll(async () => {
    await https?.close();
    await stack?.stop();
  });

  const call = <T = unknown>(method: string, path: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    httpsJson<T>(method, `${https.url}${path}`, { ca: https.ca, key, ...options });
  const page = async (query = '', k = key): Promise<Page> => {
    const res = await call<Page>('GET', `/api/v1/events${query}`, { key: k });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const waitForEvents = (predicate: (events: FeedEvent[]) => boolean, query = '?limit=1000') =>
    eventually(async () => {
      const { events } = await page(query);
      return predicate(events) ? events : undefined;
    }, 15_000);

  let memoId: string;

  it('tells a memo’s life in public events: created, processed, updated (the changed fields); ids only', async () => {
    const created = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', {
      body: { title: 'Secret launch plan', content: 'The launch codes are in the blue folder. Nobody may read them.', reference_id: 'ref-1' },
    });
    expect(created.status, created.text).toBe(200);
    memoId = created.body.memo_uuid;
    const mine = (events: FeedEvent[]) => events.filter((e) => e.memo_uuid === memoId);
    const processed = await waitForEvents((events) => mine(events).some((e) => e.type === 'memo.processed'));
    expect(mine(processed).map((e) => e.type)).toEqual(['memo.created', 'memo.processed']);
    const [first, done] = mine(processed);
    expect(first).toMatchObject({ type: 'memo.created', project_id: projectId, memo_uuid: memoId, client_reference_id: 'ref-1', revision: 1 });
    expect(done).toMatchObject({ type: 'memo.processed', revision: 1, client_reference_id: 'ref-1' });
    expect(Date.parse(done!.at)).toBeGreaterThanOrEqual(Date.parse(first!.at));
    expect(first!.id < done!.id).toBe(true);

    const patched = await call('PATCH', `/api/v1/memo/${memoId}`, { body: { title: 'Renamed', metadata: { a: 1 } } });
    expect(patched.status, patched.text).toBe(200);
    const contentPatched = await call('PATCH', `/api/v1/memo/${memoId}`, { body: { content: 'Fresh words about gardening and tomatoes.' } });
    expect(contentPatched.status, contentPatched.text).toBe(200);
    const updated = await waitForEvents((events) => mine(events).filter((e) => e.type === 'memo.processed').length === 2);
    const updates = mine(updated).filter((e) => e.type === 'memo.updated');
    expect(updates.map((e) => e.fields)).toEqual([['title', 'metadata'], ['content']]);
    expect(updates[1]!.revision).toBe(2);
    expect(mine(updated).filter((e) => e.type === 'memo.processed').map((e) => e.revision)).toEqual([1, 2]);
    // Never content or title.
    const text = JSON.stringify(updated);
    for (const secret of ['launch', 'Secret', 'Renamed', 'gardening']) expect(text).not.toContain(secret);
    // Ids increase along the feed.
    const ids = updated.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    // Another project sees none of it.
    expect((await page('', otherKey)).events).toEqual([]);
  });

  it('keeps an erased memo’s events, ids only: its reference id is gone from every one of them', async () => {
    const created = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { body: { title: 'Short-lived', content: 'Here today, gone tomorrow.', reference_id: 'ref-gone-7f3a' } });
    const goneId = created.body.memo_uuid;
    const before = await waitForEvents((events) => events.some((e) => e.memo_uuid === goneId && e.type === 'memo.processed'));
    expect(before.filter((e) => e.memo_uuid === goneId).map((e) => e.client_reference_id)).toEqual(['ref-gone-7f3a', 'ref-gone-7f3a']);
    expect((await call('DELETE', `/api/v1/memo/${goneId}`)).status).toBe(204);
    const after = await waitForEvents((events) => events.some((e) => e.memo_uuid === goneId && e.type === 'memo.deleted'));
    expect(after.filter((e) => e.memo_uuid === goneId).map((e) => [e.type, e.client_reference_id])).toEqual([
      ['memo.created', null],
      ['memo.processed', null],
      ['memo.deleted', null],
    ]);
    expect(JSON.stringify(after)).not.toContain('ref-gone-7f3a');
  });

  it('says memo.failed with the stage and reason when processing fails, and memo.expired when a memo expires', async () => {
    const { payload, contentType } = multipart({ name: 'broken.pdf', bytes: Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nendobj\ntrailer garbage') });
    const uploaded = await httpsJson<{ memo_uuid: string }>('POST', `${https.url}/api/v1/memo`, { ca: https.ca, key, raw: { bytes: payload, contentType } });
    expect(uploaded.status, uploaded.text).toBe(200);
    const failedId = uploaded.body.memo_uuid;
    const withFailure = await waitForEvents((events) => events.some((e) => e.memo_uuid === failedId && e.type === 'memo.failed'));
    const failed = withFailure.find((e) => e.memo_uuid === failedId && e.type === 'memo.failed')!;
    expect(failed).toMatchObject({ stage: 'extracting', revision: 1 });
    expect(failed.reason!.length).toBeGreaterThan(0);

    const expiring = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', {
      body: { title: 'Brief', content: 'This note does not last.', reference_id: 'ref-expiring', expiration_date: new Date(Date.now() + 1_500).toISOString() },
    });
    expect(expiring.status, expiring.text).toBe(200);
    const expiredId = expiring.body.memo_uuid;
    // The memo's key is shredded just after its tombstone is published: from then on its earlier
    // events read without the reference id.
    const after = await waitForEvents((events) => {
      const mine = events.filter((e) => e.memo_uuid === expiredId);
      return mine.some((e) => e.type === 'memo.expired') && mine.every((e) => e.client_reference_id === null);
    });
    const expired = after.filter((e) => e.memo_uuid === expiredId);
    expect(expired[0]).toMatchObject({ type: 'memo.created', client_reference_id: null });
    expect(expired.at(-1)).toMatchObject({ type: 'memo.expired', revision: null, client_reference_id: null });
    expect((await call('DELETE', `/api/v1/memo/${failedId}`)).status).toBe(204);
    await waitForEvents((events) => events.some((e) => e.memo_uuid === failedId && e.type === 'memo.deleted'));
  });

  it('pages with after and limit, filters by types, and answers next', async () => {
    const all = (await page('?limit=1000')).events;
    expect(all.length).toBeGreaterThanOrEqual(12);
    const first = await page('?limit=2');
    expect(first.events.map((e) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect(first.next).toBe(all[1]!.id);
    const second = await page(`?limit=2&after=${first.next}`);
    expect(second.events.map((e) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    const end = await page(`?after=${all.at(-1)!.id}`);
    expect(end).toEqual({ events: [], next: all.at(-1)!.id });
    expect(await page('?limit=5', otherKey)).toEqual({ events: [], next: null });

    const processed = await page('?types=memo.processed');
    expect(processed.events).toEqual(all.filter((e) => e.type === 'memo.processed'));
    expect(processed.events.length).toBeGreaterThanOrEqual(3);
    const two = await page('?types=memo.processed,memo.deleted');
    expect(two.events).toEqual(all.filter((e) => e.type === 'memo.processed' || e.type === 'memo.deleted'));
    const afterFirstProcessed = await page(`?types=memo.processed,memo.deleted&limit=1&after=${two.events[0]!.id}`);
    expect(afterFirstProcessed.events.map((e) => e.id)).toEqual([two.events[1]!.id]);
  });

  it('refuses bad limits, cursors and types with a 400 that says why', async () => {
    for (const [query, message] of [
      ['?limit=0', 'limit must be an integer from 1 to 1000'],
      ['?limit=1001', 'limit must be an integer from 1 to 1000'],
      ['?limit=ten', 'limit must be an integer from 1 to 1000'],
      ['?after=12', 'after must be an event id from this feed'],
      ['?types=memo.exploded', 'types: unknown event type'],
    ] as const) {
      const res = await call<{ error: string }>('GET', `/api/v1/events${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toContain(message);
    }
    expect((await call('GET', '/api/v1/events', { key: undefined as unknown as string, headers: {} })).status).toBe(401);
  });

  it('streams events as SSE, resuming after Last-Event-ID, with pings', async () => {
    const all = (await page('?limit=1000')).events;
    const resumed = await readEventStream(`${https.url}/api/v1/events`, https.ca, key, { 'last-event-id': all[2]!.id }, all.length - 3);
    expect(resumed.status).toBe(200);
    expect(resumed.contentType).toContain('text/event-stream');
    expect(resumed.text.startsWith(': ping\n\n')).toBe(true);
    expect(resumed.events.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    expect(resumed.events.map((e) => e.data)).toEqual(all.slice(3));

    // Live: a stream opened now gets the next memo's events as they happen, filtered by type.
    const live = readEventStream(`${https.url}/api/v1/events?types=memo.created&after=${all.at(-1)!.id}`, https.ca, key, {}, 1);
    await new Promise((r) => setTimeout(r, 300));
    const created = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { body: { title: 'Live one', content: 'Streaming test content.' } });
    const got = await live;
    expect(got.events.map((e) => [e.data.type, e.data.memo_uuid])).toEqual([['memo.created', created.body.memo_uuid]]);

    const bad = await readEventStream(`${https.url}/api/v1/events`, https.ca, key, { 'last-event-id': 'nope' }, 1, 2_000);
    expect(bad.status).toBe(400);
  });
});
