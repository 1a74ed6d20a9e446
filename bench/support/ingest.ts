import type { Memo } from '@memex/contracts';
import type { httpsJson } from '../../test/support/https';
import { pool } from './stats';

export type Call = <T = unknown>(method: string, url: string, body?: unknown) => ReturnType<typeof httpsJson<T>>;

/** The tree under test has no `POST /api/v1/memo/batch` (it answered 404). */
export class NoBatchRoute extends Error {
  constructor() {
    super('the batch route POST /api/v1/memo/batch answered 404 (a tree without it)');
  }
}

export interface Posted {
  ids: string[];
  /** Milliseconds per request (a batch is one request). */
  latencies: number[];
}

const body = (content: string, i: number) => ({ title: `Memo ${i}`, content });

/** One POST /api/v1/memo per memo, `concurrency` at once. */
export async function postSingle(call: Call, texts: readonly string[], concurrency: number): Promise<Posted> {
  const latencies: number[] = [];
  const ids = await pool(texts.map((content, i) => async () => {
    const t = performance.now();
    const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', body(content, i));
    latencies.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`POST failed: ${res.status} ${res.text}`);
    return res.body.memo_uuid;
  }), concurrency);
  return { ids, latencies };
}

/**
 * POST /api/v1/memo/batch in batches of `batchSize`, `concurrency` batches at once; throws NoBatchRoute on 404.
 * `onPosted` is told the memos answered so far after each batch.
 */
export async function postBulk(
  call: Call,
  texts: readonly string[],
  batchSize: number,
  concurrency: number,
  onPosted?: (posted: number) => void,
): Promise<Posted> {
  let posted = 0;
  const latencies: number[] = [];
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += batchSize) batches.push(texts.slice(i, i + batchSize));
  const answers = await pool(batches.map((batch, b) => async () => {
    const t = performance.now();
    const res = await call<{ results: ({ ok: true; memo_uuid: string } | { ok: false; status: number; error: string })[] }>(
      'POST',
      '/api/v1/memo/batch',
      { memos: batch.map((content, i) => body(content, b * batchSize + i)) },
    );
    latencies.push(performance.now() - t);
    if (res.status === 404) throw new NoBatchRoute();
    if (res.status !== 200) throw new Error(`POST /memo/batch failed: ${res.status} ${res.text}`);
    const ids = res.body.results.map((r) => {
      if (!r.ok) throw new Error(`a memo of the batch was refused: ${r.status} ${r.error}`);
      return r.memo_uuid;
    });
    posted += ids.length;
    onPosted?.(posted);
    return ids;
  }), concurrency);
  return { ids: answers.flat(), latencies };
}

/** Options of {@link waitFeed}. */
export interface WaitFeedOptions {
  /** Milliseconds between polls once the feed is read to its end. */
  pollMs?: number;
  /** Told how many of the ids were seen so far, after each page. */
  onSeen?: (seen: number) => void;
  /** Throws (naming memos still unseen) when no new one was seen for this long; none: waits as long as it takes. */
  stallMs?: number;
}

/** The feed gave no new `memo.processed`/`memo.failed` for the memos still waited on within `stallMs`. */
export class FeedStalled extends Error {
  constructor(readonly waiting: readonly string[], total: number, stallMs: number, cursor: string | undefined) {
    super(
      `no memo.processed or memo.failed on the feed for ${waiting.length} of ${total} memos in ${Math.round(stallMs / 1000)} s ` +
        `(feed read to ${cursor ?? 'its start'}); e.g. ${waiting.slice(0, 5).join(', ')}`,
    );
  }
}

/**
 * Waits until every memo in `ids` has a `memo.processed` (or `memo.failed`) event, reading the
 * project's event feed after `after` every `pollMs`: a few requests per thousand memos, where one
 * GET per memo would load the stack it measures. Returns when that was seen and the feed's cursor.
 */
export async function waitFeed(
  call: Call,
  ids: readonly string[],
  after?: string,
  { pollMs = 50, onSeen, stallMs }: WaitFeedOptions = {},
): Promise<{ at: number; next: string | undefined; failed: number }> {
  const waiting = new Set(ids);
  let failed = 0;
  let cursor = after;
  let movedAt = performance.now();
  for (;;) {
    const res = await call<{ events: { type: string; memo_uuid: string }[]; next: string | null }>(
      'GET',
      `/api/v1/events?limit=1000&types=memo.processed,memo.failed${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (res.status !== 200) throw new Error(`GET /events failed: ${res.status} ${res.text}`);
    const before = waiting.size;
    for (const e of res.body.events) {
      if (waiting.delete(e.memo_uuid) && e.type === 'memo.failed') failed++;
    }
    cursor = res.body.next ?? cursor;
    onSeen?.(ids.length - waiting.size);
    if (waiting.size === 0) return { at: Date.now(), next: cursor, failed };
    if (waiting.size < before) movedAt = performance.now();
    else if (stallMs !== undefined && performance.now() - movedAt > stallMs) throw new FeedStalled([...waiting], ids.length, stallMs, cursor);
    if (res.body.events.length < 1000) await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** After the timed part: every memo read back `pending: false`, and their chunks counted (`onRead`: how many so far). */
export async function chunksOf(call: Call, ids: readonly string[], concurrency = 8, onRead?: (read: number) => void): Promise<number> {
  let read = 0;
  const counts = await pool(ids.map((id) => async () => {
    const res = await call<Memo>('GET', `/api/v1/memo/${id}`);
    if (res.status !== 200 || res.body.pending) throw new Error(`memo ${id} is not processed after its memo.processed event: ${res.status} ${res.text.slice(0, 200)}`);
    onRead?.(++read);
    return res.body.chunks.length;
  }), concurrency);
  return counts.reduce((a, b) => a + b, 0);
}

interface Traffic {
  in: number;
  out: number;
  inBytes: number;
  outBytes: number;
}

/**
 * Messages and bytes each service's connections sent to NATS (`in`, as the server counts) and got
 * from it (`out`), summed by service, from nats-server's /connz (open connections).
 */
export async function natsTraffic(port: number): Promise<Map<string, Traffic>> {
  const res = await fetch(`http://127.0.0.1:${port}/connz?limit=1024`);
  const { connections } = (await res.json()) as { connections: { name?: string; in_msgs: number; out_msgs: number; in_bytes: number; out_bytes: number }[] };
  const byService = new Map<string, Traffic>();
  for (const c of connections) {
    const service = /^memex-([a-z]+)-/.exec(c.name ?? '')?.[1] ?? 'other';
    const t = byService.get(service) ?? { in: 0, out: 0, inBytes: 0, outBytes: 0 };
    t.in += c.in_msgs;
    t.out += c.out_msgs;
    t.inBytes += c.in_bytes;
    t.outBytes += c.out_bytes;
    byService.set(service, t);
  }
  return byService;
}

/** Per memo, the messages each service sent and got, and the bytes in all, between two readings. */
export function perMemo(before: Map<string, Traffic>, after: Map<string, Traffic>, memos: number): string {
  let sent = 0;
  let bytes = 0;
  const parts: string[] = [];
  for (const [service, t] of [...after].sort((a, b) => b[1].in + b[1].out - (a[1].in + a[1].out))) {
    const b = before.get(service) ?? { in: 0, out: 0, inBytes: 0, outBytes: 0 };
    const sentHere = t.in - b.in;
    sent += sentHere;
    bytes += t.inBytes - b.inBytes + (t.outBytes - b.outBytes);
    parts.push(`${service} ${(sentHere / memos).toFixed(1)} sent / ${((t.out - b.out) / memos).toFixed(1)} got`);
  }
  return `${(sent / memos).toFixed(1)} sent, ${(bytes / memos / 1024).toFixed(1)} KiB through the server (${parts.join(', ')})`;
}
