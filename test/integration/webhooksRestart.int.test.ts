/**
 * Deliveries are durable consumers: a kill -9 of a memo service (which projects the feed and runs
 * the dispatcher) in the middle of a burst loses no event, and no event leaves its project.
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

describe('webhook deliveries across a kill -9 of a memo service', () => {
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

  it(`delivers every event of a ${BURST}-memo burst at least once, and none to another project`, async () => {
    const call = <T>(method: string, path: string, key: string, body?: unknown) => httpsJson<T>(method, `${stack.base}${path}`, { key, agent: stack.agent, ...(body ? { body } : {}) });
    const other = await stack.createProject('other');
    const hook = await call<{ secret: string; webhook_id: string }>('POST', '/api/v1/webhooks', stack.key, { url: `${mine.url}/in`, events: ['*'] });
    expect(hook.status, hook.text).toBe(200);
    const otherHook = await call('POST', '/api/v1/webhooks', other.key, { url: theirs.url, events: ['*'] });
    expect(otherHook.status).toBe(200);

    const created: string[] = [];
    let next = 0;
    let killed = false;
    const worker = async () => {
      for (let i = next++; i < BURST; i = next++) {
        if (i === BURST / 4 && !killed) {
          killed = true;
          const [victim] = pidsOf(stack.process.pid!, '/memo.mjs');
          expect(victim).toBeDefined();
          process.kill(victim!, 'SIGKILL');
        }
        for (let attempt = 0; ; attempt++) {
          const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', stack.key, { title: `Burst ${i}`, content: `Burst memo ${i} about harbours, tides and ferries.` });
          if (res.status === 200) {
            created.push(res.body.memo_uuid);
            break;
          }
          // A create cut off by the kill may be answered 5xx; the client retries as any would.
          expect(res.status, res.text).toBeGreaterThanOrEqual(500);
          expect(attempt).toBeLessThan(5);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(killed).toBe(true);

    const received = () => new Set(mine.received.map((r) => String(r.headers['webhook-id'])));
    const createdDelivered = () => new Set(mine.received.map((r) => JSON.parse(r.body) as FeedEvent).filter((e) => e.type === 'memo.created').map((e) => e.memo_uuid));
    await eventually(() => created.every((id) => createdDelivered().has(id)), 180_000, 500);

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
    await eventually(() => feed.every((e) => received().has(e.id)), 120_000, 500);
    for (const r of mine.received.slice(0, 50)) expect(verifyStandardWebhook(hook.body.secret, r.headers, r.body)).toBe(true);
    expect(theirs.received).toEqual([]);
    const duplicates = mine.received.length - received().size;
    console.log(`burst ${BURST}: ${feed.length} feed events, ${mine.received.length} deliveries, ${duplicates} duplicates`);
  }, 600_000);
});
