/**
 * Deliveries are durable consumers: a kill -9 of each service in turn in the middle of a burst (a
 * memo service, which projects the feed and runs the dispatcher; then the indexer and the agent;
 * then the gateway) loses no event, and no event leaves its project.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedEvent } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { startProcessStack, type ProcessStack } from '../support/processStack';
import { startWebhookReceiver, verifyStandardWebhook } from '../support/webhookReceiver';

/** Child processes of `parent` whose command line runs `entry`. */
function pidsOf(parent: number, entry: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(entry);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const BURST = 2_000;

describe('webhook deliveries across a kill -9 of each service', () => {
  let stack: ProcessStack;
  let mine: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let theirs: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    stack = await startProcessStack(
      { MEMEX_RATE_LIMIT: '0', MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true', MEMEX_WEBHOOK_RETRY_DELAYS_MS: '500,1000,2000,4000', MEMEX_WEBHOOK_TIMEOUT_MS: '2000' },
      ['--scale', 'memo=2'],
    );
    mine = await startWebhookReceiver();
    theirs = await startWebhookReceiver();
  }, 180_000);
  afterAll(async () => {
    await mine?.close();
    await theirs?.close();
    await stack?.stop();
  });

  it(`delivers every event of a ${BURST}-memo burst at least once through kills of every service, and none to another project`, async () => {
    const call = <T>(method: string, path: string, key: string, body?: unknown) => httpsJson<T>(method, `${stack.base}${path}`, { key, agent: stack.agent, ...(body ? { body } : {}) });
    const other = await stack.createProject('other');
    const hook = await call<{ secret: string; webhook_id: string }>('POST', '/api/v1/webhooks', stack.key, { url: `${mine.url}/in`, events: ['*'] });
    expect(hook.status, hook.text).toBe(200);
    const otherHook = await call('POST', '/api/v1/webhooks', other.key, { url: theirs.url, events: ['*'] });
    expect(otherHook.status).toBe(200);

    const created: string[] = [];
    let next = 0;
    const killed: string[] = [];
    const kill = (entry: string) => {
      const [victim] = pidsOf(stack.process.pid!, entry);
      expect(victim, entry).toBeDefined();
      process.kill(victim!, 'SIGKILL');
      killed.push(entry);
    };
    const worker = async () => {
      for (let i = next++; i < BURST; i = next++) {
        if (i === BURST / 4) kill('/memo.mjs');
        if (i === BURST / 2) {
          kill('/indexer.mjs');
          kill('/agent.mjs');
        }
        if (i === (BURST * 3) / 4) kill('/gateway.mjs');
        for (let attempt = 0; ; attempt++) {
          // While the gateway restarts, connections are refused; a create cut off by a kill may be
          // answered 5xx. The client retries as any would (a retried create may make a second memo).
          const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', stack.key, { title: `Burst ${i}`, content: `Burst memo ${i} about harbours, tides and ferries.` }).catch(
            (error: unknown) => ({ status: 0, text: String(error), body: undefined }),
          );
          if (res.status === 200 && res.body) {
            created.push(res.body.memo_uuid);
            break;
          }
          expect(res.status === 0 || res.status >= 500, res.text).toBe(true);
          expect(attempt).toBeLessThan(200);
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(killed).toEqual(['/memo.mjs', '/indexer.mjs', '/agent.mjs', '/gateway.mjs']);

    const received = () => new Set(mine.received.map((r) => String(r.headers['webhook-id'])));
    const createdDelivered = () => new Set(mine.received.map((r) => JSON.parse(r.body) as FeedEvent).filter((e) => e.type === 'memo.created').map((e) => e.memo_uuid));
    await eventually(() => created.every((id) => createdDelivered().has(id)), 180_000, 500);
    // Processing resumed after the indexer's and the agent's restarts: every memo's memo.processed came too.
    const processedDelivered = () => new Set(mine.received.map((r) => JSON.parse(r.body) as FeedEvent).filter((e) => e.type === 'memo.processed').map((e) => e.memo_uuid));
    await eventually(() => created.every((id) => processedDelivered().has(id)), 300_000, 1_000);

    // Every event the feed holds now for the project has reached the receiver.
    const feed: FeedEvent[] = [];
    for (let after = ''; ; ) {
      const page = await call<{ events: FeedEvent[]; next: string }>('GET', `/api/v1/events?limit=1000${after ? `&after=${after}` : ''}`, stack.key);
      expect(page.status).toBe(200);
      feed.push(...page.body.events);
      if (page.body.events.length < 1000) break;
      after = page.body.next;
    }
    expect(feed.filter((e) => e.type === 'memo.created').length).toBeGreaterThanOrEqual(created.length);
    expect(feed.filter((e) => e.type === 'memo.processed').length).toBeGreaterThanOrEqual(created.length);
    await eventually(() => feed.every((e) => received().has(e.id)), 120_000, 500);
    for (const r of mine.received.slice(0, 50)) expect(verifyStandardWebhook(hook.body.secret, r.headers, r.body)).toBe(true);
    expect(theirs.received).toEqual([]);
    const duplicates = mine.received.length - received().size;
    console.log(`burst ${BURST}: ${feed.length} feed events, ${mine.received.length} deliveries, ${duplicates} duplicates`);
  }, 900_000);
});
