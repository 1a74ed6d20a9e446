/**
 * Events out (issue #50), through the whole stack as `pnpm start` runs it (separate processes, HTTPS):
 *
 * - processed → webhook: for each memo, the time from its `memo.processed` event (`at`: when the
 *   memo service recorded the revision's last result) to the arrival of that event at a local
 *   webhook receiver; p50, p95, max.
 * - feed throughput to one reader: events/s read through GET /api/v1/events in pages of 1,000 over
 *   one keep-alive connection, and through the SSE stream from the start. The feed is seeded with
 *   `--events` synthetic public events published straight to the project's feed subject (a memo
 *   burst makes them too slowly to measure reading), beside the real ones of the first part.
 *
 *   tsx bench/events.bench.ts [--memos 100] [--concurrency 4] [--events 50000]
 */
import { request } from 'node:https';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Streams, Subjects, feedEventSeq, type FeedEvent, type FeedEventBody } from '@memex/contracts';
import { connectNats, encodeJson } from '@memex/runtime';
import { httpsJson } from '../test/support/https';
import { startProcessStack } from '../test/support/processStack';
import { startWebhookReceiver } from '../test/support/webhookReceiver';
import { percentile, pool, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '4' },
    events: { type: 'string', default: '50000' },
  },
});
const MEMOS = Number(values.memos);
const CONCURRENCY = Number(values.concurrency);
const EVENTS = Number(values.events);

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true' });
const arrivals = new Map<string, number>();
const delivered = new Map<string, { event: FeedEvent; at: number }>();
const receiver = await startWebhookReceiver((req, res) => {
  const event = JSON.parse(req.body) as FeedEvent;
  if (event.type === 'memo.processed') {
    arrivals.set(event.memo_uuid, req.at - Date.parse(event.at));
    delivered.set(event.memo_uuid, { event, at: req.at });
  }
  res.end();
});
const nc = await connectNats({ url: stack.natsUrl, name: 'events-bench' });
try {
  const call = <T>(method: string, path: string, body?: unknown) => httpsJson<T>(method, `${stack.base}${path}`, { key: stack.key, agent: stack.agent, ...(body ? { body } : {}) });
  const hook = await call('POST', '/api/v1/webhooks', { url: receiver.url, events: ['memo.processed'] });
  if (hook.status !== 200) throw new Error(`webhook: ${hook.text}`);

  // Part 1: processed → webhook latency.
  const ids = await pool(
    Array.from({ length: MEMOS }, (_, i) => async () => {
      const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `Latency ${i}`, content: `Memo ${i} on tides, harbours and the ferries that cross them at dawn.` });
      if (res.status !== 200) throw new Error(res.text);
      return res.body.memo_uuid;
    }),
    CONCURRENCY,
  );
  const deadline = Date.now() + 300_000;
  while (ids.some((id) => !arrivals.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const latencies = ids.map((id) => arrivals.get(id)).filter((v): v is number => v !== undefined);
  // Where the time goes: recorded → stored in the feed (the projector), stored → received (the dispatcher).
  const jsm = await jetstreamManager(nc);
  const toFeed: number[] = [];
  const toReceiver: number[] = [];
  for (const { event, at } of delivered.values()) {
    const stored = await jsm.streams.getMessage(Streams.feed, { seq: feedEventSeq(event.id)! });
    if (!stored) continue;
    const storedAt = stored.time.getTime();
    toFeed.push(storedAt - Date.parse(event.at));
    toReceiver.push(at - storedAt);
  }

  // Part 2: the feed to one reader.
  const js = jetstream(nc);
  const seedStarted = Date.now();
  for (let done = 0; done < EVENTS; ) {
    const batch = Math.min(1_000, EVENTS - done);
    await Promise.all(
      Array.from({ length: batch }, () => {
        const body: FeedEventBody = { type: 'memo.updated', at: new Date().toISOString(), project_id: stack.projectId, memo_uuid: randomUUID(), client_reference_id: null, revision: 1, fields: ['title'] };
        return js.publish(Subjects.feed(body.project_id, body.type), encodeJson(body));
      }),
    );
    done += batch;
  }
  const seedS = (Date.now() - seedStarted) / 1000;

  const pagesStarted = performance.now();
  let paged = 0;
  let pages = 0;
  for (let after = ''; ; ) {
    const page = await call<{ events: FeedEvent[]; next: string }>('GET', `/api/v1/events?limit=1000${after ? `&after=${after}` : ''}`);
    if (page.status !== 200) throw new Error(page.text);
    paged += page.body.events.length;
    pages++;
    if (page.body.events.length < 1000) break;
    after = page.body.next;
  }
  const pagedS = (performance.now() - pagesStarted) / 1000;

  const sseStarted = performance.now();
  const streamed = await new Promise<number>((resolve, reject) => {
    const req = request(`${stack.base}/api/v1/events`, { ca: stack.ca, headers: { authorization: `Bearer ${stack.key}`, accept: 'text/event-stream' } }, (res) => {
      let count = 0;
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const text = tail + chunk;
        const blocks = text.split('\n\n');
        tail = blocks.pop() ?? '';
        for (const block of blocks) if (block.startsWith('id: ')) count++;
        if (count >= paged) {
          req.destroy();
          resolve(count);
        }
      });
      res.on('error', reject);
    });
    req.on('error', (error) => (error.message.includes('aborted') || error.message.includes('socket hang up') ? undefined : reject(error)));
    req.end();
  });
  const sseS = (performance.now() - sseStarted) / 1000;

  printTable(`processed → webhook (${MEMOS} memos, ${CONCURRENCY} at a time, ${latencies.length} delivered)`, [
    ['p50', `${percentile(latencies, 50).toFixed(0)} ms`],
    ['p95', `${percentile(latencies, 95).toFixed(0)} ms`],
    ['max', `${Math.max(...latencies).toFixed(0)} ms`],
    ['p50 recorded → in the feed', `${percentile(toFeed, 50).toFixed(0)} ms`],
    ['p50 in the feed → received', `${percentile(toReceiver, 50).toFixed(0)} ms`],
  ]);
  printTable(`the feed to one reader (${paged.toLocaleString()} events: ${EVENTS.toLocaleString()} seeded in ${seedS.toFixed(1)} s, the rest real)`, [
    ['JSON pages of 1,000', `${(paged / pagedS).toFixed(0)} events/s (${pages} pages, ${pagedS.toFixed(2)} s)`],
    ['SSE from the start', `${(streamed / sseS).toFixed(0)} events/s (${sseS.toFixed(2)} s)`],
  ]);
} finally {
  await nc.close();
  await receiver.close();
  await stack.stop();
}
