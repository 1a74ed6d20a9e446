/**
 * kill -9 of the indexer while 1,000 memos are ingested, and in the middle of a batch (its chunks
 * in the index, none recorded): after a restart every memo is processed, with no chunk missing and
 * none twice, in the index and in the memos, and each revision's chunks recorded once in its history.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo } from '@memex/contracts';
import { eventually, seededRandom, pick } from '@memex/testing';
import { chunkText } from '@memex/text';
import { exited, spawnTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

const WORDS = 'river mountain engine budget harbour satellite protein glacier theorem market violin compiler orbit enzyme'.split(' ');

function memoContent(random: () => number): string {
  const sentence = () => `${Array.from({ length: 8 + Math.floor(random() * 10) }, () => pick(random, WORDS)).join(' ')}.`;
  const paragraph = () => Array.from({ length: 3 + Math.floor(random() * 5) }, sentence).join(' ');
  return Array.from({ length: 1 + Math.floor(random() * 4) }, paragraph).join('\n\n');
}

describe('indexer kill -9 during ingestion', () => {
  let stack: Stack;

  /** POSTs the memos 50 at a time; their ids in order. */
  async function post(key: string, contents: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < contents.length; i += 50) {
      const batch = await Promise.all(
        contents.slice(i, i + 50).map(async (content, j) => {
          const res = await stack.app.inject({
            method: 'POST',
            url: '/api/v1/memo',
            headers: { authorization: `Bearer ${key}` },
            payload: { title: `Memo ${i + j}`, content },
          });
          expect(res.statusCode).toBe(200);
          return res.json().memo_uuid as string;
        }),
      );
      ids.push(...batch);
    }
    return ids;
  }

  const get = async (key: string, id: string) => {
    const res = await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    return res.json() as Memo;
  };

  /** How many of each event type the memo's history holds. */
  const history = async (projectId: string, id: string) => {
    const counts: Record<string, number> = {};
    for (const e of (await stack.memo.commands.load(projectId, id)).events) counts[e.type] = (counts[e.type] ?? 0) + 1;
    return counts;
  };

  /** Chunk indexes in the index by memo (every chunk id once). */
  const indexedChunks = (indexDb: string) => {
    const db = new Database(indexDb, { readonly: true, fileMustExist: true });
    const rows = db.prepare('SELECT memo_id, chunk_id, idx FROM chunks').all() as { memo_id: string; chunk_id: string; idx: number }[];
    db.close();
    expect(new Set(rows.map((r) => r.chunk_id)).size).toBe(rows.length);
    const byMemo = new Map<string, number[]>();
    for (const r of rows) byMemo.set(r.memo_id, [...(byMemo.get(r.memo_id) ?? []), r.idx]);
    return byMemo;
  };

  /**
   * A fresh indexer takes over; once every memo is processed, each holds exactly its chunks in
   * the index and in the memo, and each event once in its history: nothing lost, nothing twice.
   */
  async function recoversExactlyOnce(key: string, projectId: string, ids: readonly string[], contents: readonly string[], indexDb: string, env: Record<string, string>): Promise<void> {
    const second = spawnTs('services/indexer/src/main.ts', [], env);
    try {
      await eventually(async () => {
        for (const id of ids) if ((await get(key, id)).pending) return false;
        return true;
      }, 120_000, 500);
      const byMemo = indexedChunks(indexDb);
      for (const [i, id] of ids.entries()) {
        const expected = chunkText(contents[i]!).length;
        expect((byMemo.get(id) ?? []).sort((a, b) => a - b)).toEqual(Array.from({ length: expected }, (_, k) => k));
        expect((await get(key, id)).chunks.map((c) => c.chunk_index)).toEqual(Array.from({ length: expected }, (_, k) => k));
        expect(await history(projectId, id)).toEqual({ MemoCreated: 1, MemoChunked: 1, MemoSummarized: 1 });
      }
    } finally {
      second.kill('SIGTERM');
      await exited(second);
    }
  }

  beforeAll(async () => {
    stack = await startStack({ indexer: false, env: { MEMEX_RATE_LIMIT: '0' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('processes all 1,000 memos exactly once after a restart', async () => {
    const { key, projectId } = await stack.project('crash');
    const random = seededRandom(99);
    const contents = Array.from({ length: 1000 }, () => memoContent(random));
    const ids = await post(key, contents);

    const indexDb = join(stack.dataDir, 'indexer', 'index.db');
    const env = { ...stack.env, LOG_LEVEL: 'warn' };
    const first = spawnTs('services/indexer/src/main.ts', [], env);
    // Let it get part of the way, then pull the plug.
    await eventually(() => {
      try {
        const db = new Database(indexDb, { readonly: true, fileMustExist: true });
        const n = (db.prepare('SELECT COUNT(DISTINCT memo_id) AS n FROM chunks').get() as { n: number }).n;
        db.close();
        return n >= 150;
      } catch {
        return false;
      }
    }, 60_000, 20);
    first.kill('SIGKILL');
    await exited(first);
    const db = new Database(indexDb, { readonly: true });
    const before = (db.prepare('SELECT COUNT(DISTINCT memo_id) AS n FROM chunks').get() as { n: number }).n;
    db.close();
    expect(before).toBeLessThan(1000);

    await recoversExactlyOnce(key, projectId, ids, contents, indexDb, env);
  }, 240_000);

  it('records each revision once when killed between a batch\'s index write and its record command', async () => {
    const { key, projectId } = await stack.project('mid-batch');
    const random = seededRandom(7);
    const contents = Array.from({ length: 200 }, () => memoContent(random));
    const ids = await post(key, contents);
    const indexDb = join(stack.dataDir, 'indexer', 'index.db');
    const env = { ...stack.env, LOG_LEVEL: 'warn' };
    // Dies on its first batch with chunks to record, after writing them to the index.
    const doomed = spawnTs('services/indexer/src/main.ts', [], { ...env, MEMEX_FAILPOINTS: 'indexer.before-record-chunks' });
    await exited(doomed);
    const written = [...indexedChunks(indexDb).keys()].filter((id) => ids.includes(id));
    expect(written.length).toBeGreaterThan(0);
    for (const id of written) expect((await history(projectId, id)).MemoChunked).toBeUndefined();

    await recoversExactlyOnce(key, projectId, ids, contents, indexDb, env);
  }, 240_000);
});
