import { randomUUID } from 'node:crypto';
import { MemexError } from '@memex/contracts';
import { openSqlite } from '@memex/runtime';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../eventStore/sqlite';
import { readLogPage } from './log';

const event = (type: string, data: unknown, subject?: string) => ({
  id: randomUUID(),
  type,
  data,
  meta: subject ? { subject } : {},
  occurredAt: new Date().toISOString(),
});

describe('the memo event log served to replays', () => {
  it('pages events as the bus carries them, each page within the byte budget, one event at least', async () => {
    const store = new SqliteEventStore(openSqlite(':memory:'));
    const sealed = (n: number) => ({ memoId: 'm1', projectId: 'p1', sealed: Buffer.alloc(n, 7).toString('base64') });
    await store.appendToStream('memo-m1', [event('MemoCreated', sealed(3_000), 'memex.evt.memo.p1.m1'), event('Internal', {})], { expectedVersion: 0 });
    await store.appendToStream('memo-m1', [event('MemoChunked', sealed(3_000), 'memex.evt.memo.p1.m1')], { expectedVersion: 2 });
    await store.appendToStream('memo-m1', [event('MemoSummarized', sealed(20_000), 'memex.evt.memo.p1.m1')], { expectedVersion: 3 });

    const whole = await readLogPage(store, { after: 0, limit: 100 }, 1_000_000);
    expect(whole.head).toBe(4);
    expect(whole.events.map((e) => [e.position, e.message.type, e.message.version])).toEqual([
      [1, 'MemoCreated', 1],
      [3, 'MemoChunked', 3],
      [4, 'MemoSummarized', 4],
    ]);
    // Sealed stays sealed: ids outside, the rest in the box.
    expect(whole.events[0]?.message).toMatchObject({ data: { memoId: 'm1', projectId: 'p1' }, memo: null, sealed: sealed(3_000).sealed });

    // A budget of ~10 KB: two 4 KB events fit, the 27 KB one comes alone on the next page.
    const first = await readLogPage(store, { after: 0, limit: 100 }, 10_000);
    expect(first.events.map((e) => e.position)).toEqual([1, 3]);
    const second = await readLogPage(store, { after: 3, limit: 100 }, 10_000);
    expect(second.events.map((e) => e.position)).toEqual([4]);
    expect((await readLogPage(store, { after: 4, limit: 100 }, 10_000)).events).toEqual([]);
    expect((await readLogPage(store, { after: 0, limit: 1 }, 1_000_000)).events).toHaveLength(1);
    await store.close();
  });

  it('refuses a malformed request with InvalidRequest', async () => {
    const store = new SqliteEventStore(openSqlite(':memory:'));
    for (const bad of [{ after: -1, limit: 10 }, { after: 0, limit: 0 }, { after: 1.5, limit: 10 }, {}]) {
      const error = await readLogPage(store, bad as never, 1_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MemexError);
      expect((error as MemexError).code).toBe('InvalidRequest');
    }
    await store.close();
  });
});
