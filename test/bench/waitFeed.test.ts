import { describe, expect, it } from 'vitest';
import { FeedStalled, waitFeed, type Call } from '../../bench/support/ingest';

type Page = { events: { type: string; memo_uuid: string }[]; next: string | null };

/** A feed answering `pages` in turn (then empty pages), recording the `after` of each request. */
function feed(pages: Page[]): { call: Call; afters: (string | null)[] } {
  const afters: (string | null)[] = [];
  const call = (async (_method: string, url: string) => {
    afters.push(new URL(url, 'https://x').searchParams.get('after'));
    const body = pages.shift() ?? { events: [], next: afters.at(-1) ?? null };
    return { status: 200, headers: {}, body, text: JSON.stringify(body), bytes: Buffer.alloc(0) };
  }) as Call;
  return { call, afters };
}

describe('waitFeed (bench support)', () => {
  it('follows the cursor until every memo was seen, counting the failed and reporting progress', async () => {
    const { call, afters } = feed([
      { events: [{ type: 'memo.processed', memo_uuid: 'a' }], next: 'evt_1' },
      { events: [], next: 'evt_1' },
      { events: [{ type: 'memo.failed', memo_uuid: 'b' }, { type: 'memo.processed', memo_uuid: 'other' }], next: 'evt_3' },
    ]);
    const seen: number[] = [];
    const done = await waitFeed(call, ['a', 'b'], undefined, { pollMs: 1, onSeen: (n) => seen.push(n), stallMs: 5_000 });
    expect(done).toMatchObject({ next: 'evt_3', failed: 1 });
    expect(afters).toEqual([null, 'evt_1', 'evt_1']);
    expect(seen).toEqual([1, 1, 2]);
  });

  it('fails naming the memos still unseen once the feed brings none of them for stallMs', async () => {
    const { call } = feed([{ events: [{ type: 'memo.processed', memo_uuid: 'a' }], next: 'evt_1' }]);
    const error = await waitFeed(call, ['a', 'lost'], undefined, { pollMs: 5, stallMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FeedStalled);
    expect((error as FeedStalled).waiting).toEqual(['lost']);
    expect((error as Error).message).toMatch(/for 1 of 2 memos .*feed read to evt_1.*lost/);
  });
});
