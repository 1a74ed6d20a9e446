/**
 * No event outside a key's space (issues 49 and 50): a property-based run of generated cross-space
 * feed reads over HTTPS, one `events:read` key per spec filter case (packages/testing's
 * filterCases), as JSON pages (random limit, `after` and `types`) and as SSE streams. Some memos
 * are erased first, so their events (and tombstones) are judged by digests. The oracle is
 * `matchesFilters` on each memo as it stood after the event, as the owner saw it; an erased memo's
 * events are expected only by spaces digests can decide (eq, neq, in, not_in on source, tags and
 * metadata), and by no other.
 */
import { Agent, request } from 'node:https';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_EVENT_TYPES, matchesFilters, type FeedEvent, type FeedEventType, type Filter, type FilterableMemo, type Memo } from '@memex/contracts';
import { decidableByDigests } from '@memex/runtime';
import { eventually } from '@memex/testing';
import { httpsJson, type HttpsResponse } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { postSpaceMemos, spaceKeys, type SpaceKey } from '../../../test/support/spaceMemos';
import { startStack, type Stack } from '../../../test/support/stack';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const RUNS = 300;
const ERASED = 6;

/** The events an SSE stream sends within `quietMs` of the last one (or of its start). */
function streamEvents(url: string, ca: string, key: string, quietMs: number, headers: Record<string, string> = {}): Promise<{ status: number; events: FeedEvent[] }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers } }, (res) => {
      let text = '';
      let timer: NodeJS.Timeout;
      const finish = () => {
        clearTimeout(timer);
        req.destroy();
        const events = text
          .split('\n\n')
          .map((block) => /^data: (.*)$/m.exec(block)?.[1])
          .filter((d): d is string => d !== undefined)
          .map((d) => JSON.parse(d) as FeedEvent);
        resolve({ status: res.statusCode ?? 0, events });
      };
      const quiet = () => {
        clearTimeout(timer);
        timer = setTimeout(finish, quietMs);
      };
      quiet();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (chunk.includes('data: ')) quiet();
      });
      res.on('end', finish);
    });
    req.on('error', reject);
    req.end();
  });
}

describe(`no event outside a key's space, over ${RUNS} generated feed reads`, () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let agent: Agent;
  let owner: string;
  /** The owner's whole feed: every event of the project. */
  let feed: FeedEvent[];
  /** Each memo as it stood after each of its events, by event id. */
  const attributesAt = new Map<string, FilterableMemo>();
  const erased = new Set<string>();
  let spaces: SpaceKey[];
  const counts = new Map<string, number>();

  const api = (method: string, path: string, key: string, body?: unknown): Promise<HttpsResponse<Json>> =>
    httpsJson<Json>(method, `${https.url}${path}`, { agent, key, ...(body === undefined ? {} : { body }) });
  const ownerFeed = async (): Promise<FeedEvent[]> => (await api('GET', '/api/v1/events?limit=1000', owner)).body.events as FeedEvent[];
  const filterable = (m: Memo): FilterableMemo => ({
    title: m.title,
    source: m.source ?? null,
    clientReferenceId: m.client_reference_id ?? null,
    tags: m.tags.map((t) => t.tag),
    metadata: m.metadata ?? {},
  });

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0' } });
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, maxSockets: 16, ca: https.ca });
    owner = (await stack.project('event-spaces')).key;
    const { generated, ids } = await postSpaceMemos(api, owner, 30, 50);
    const created = new Map<string, FilterableMemo>(
      generated.map((m, i) => [ids[i]!, { title: m.title, source: m.source, clientReferenceId: m.clientReferenceId, tags: m.tags, metadata: m.metadata }]),
    );
    const processed = new Map<string, FilterableMemo>();
    for (const id of ids) {
      const memo = await eventually(async () => {
        const res = await api('GET', `/api/v1/memo/${id}`, owner);
        return res.status === 200 && !res.body.pending ? (res.body as Memo) : undefined;
      }, 60_000);
      processed.set(id, filterable(memo));
    }
    // Erase a few, once their processing is in the feed: their events are then judged by digests.
    await eventually(async () => ((await ownerFeed()).filter((e) => e.type === 'memo.processed').length === ids.length ? true : undefined), 30_000);
    for (const id of ids.filter((_, i) => i % 5 === 0).slice(0, ERASED)) {
      expect((await api('DELETE', `/api/v1/memo/${id}`, owner)).status).toBe(204);
      erased.add(id);
    }
    feed = await eventually(async () => {
      const events = await ownerFeed();
      return events.filter((e) => e.type === 'memo.deleted').length === ERASED ? events : undefined;
    }, 30_000);
    for (const e of feed) attributesAt.set(e.id, e.type === 'memo.created' ? created.get(e.memo_uuid)! : processed.get(e.memo_uuid)!);
    spaces = await spaceKeys(api, owner, generated, ['events:read']);
  }, 240_000);

  afterAll(async () => {
    agent?.destroy();
    await https?.close();
    await stack?.stop();
  });

  /** What a space must see of the feed: exactly the events of memos inside it, as they stood then. */
  const expected = (filters: readonly Filter[]) =>
    feed.filter((e) => (erased.has(e.memo_uuid) ? decidableByDigests(filters) : true) && matchesFilters(attributesAt.get(e.id)!, filters));

  it('the feed is set up as the oracle expects: every kind of event, erased memos included', () => {
    expect(new Set(feed.map((e) => e.type))).toEqual(new Set(['memo.created', 'memo.processed', 'memo.deleted']));
    // Spaces see something and miss something, erased memos' events included.
    const sizes = spaces.map((s) => expected(s.filters).length);
    expect(sizes.some((n) => n > 0 && n < feed.length)).toBe(true);
    expect(spaces.some((s) => expected(s.filters).some((e) => e.type === 'memo.deleted'))).toBe(true);
  });

  it('shows each space exactly its events, as JSON pages and over SSE, whatever the after, limit and types', async () => {
    const attempt = fc.record({
      space: fc.nat({ max: spaces.length - 1 }),
      via: fc.constantFrom('json', 'json', 'json', 'sse'),
      limit: fc.integer({ min: 1, max: 60 }),
      after: fc.option(fc.nat({ max: feed.length - 1 }), { nil: undefined }),
      types: fc.option(fc.subarray([...FEED_EVENT_TYPES] as FeedEventType[], { minLength: 1 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(attempt, async ({ space, via, limit, after, types }) => {
        const { key, filters, name } = spaces[space]!;
        const afterId = after === undefined ? undefined : feed[after]!.id;
        const want = expected(filters)
          .filter((e) => afterId === undefined || e.id > afterId)
          .filter((e) => !types || types.includes(e.type));
        const where = `${via} as "${name}" after ${afterId ?? '-'} types ${types?.join(',') ?? '*'}`;
        counts.set(via, (counts.get(via) ?? 0) + 1);
        const query = (cursor: string | undefined) =>
          new URLSearchParams({ ...(cursor ? { after: cursor } : {}), ...(types ? { types: types.join(',') } : {}), limit: String(limit) }).toString();
        let got: FeedEvent[] = [];
        if (via === 'json') {
          let cursor = afterId;
          for (let pages = 0; pages < 200; pages++) {
            const res = await api('GET', `/api/v1/events?${query(cursor)}`, key);
            expect(res.status, `${where}: ${res.text}`).toBe(200);
            got.push(...(res.body.events as FeedEvent[]));
            if (res.body.events.length === 0) break;
            cursor = res.body.next as string;
          }
        } else {
          const res = await streamEvents(`${https.url}/api/v1/events?${query(afterId)}`, https.ca, key, 700);
          expect(res.status, where).toBe(200);
          got = res.events;
        }
        // Nothing outside the space, nothing inside it missing, in feed order, ids only.
        expect(got.map((e) => `${e.type} ${e.memo_uuid}`), where).toEqual(want.map((e) => `${e.type} ${e.memo_uuid}`));
        expect(got, where).toEqual(want);
      }),
      { numRuns: RUNS, seed: 50 },
    );
    expect([...counts.keys()].sort()).toEqual(['json', 'sse']);
  }, 600_000);
});
