import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedEvent, Webhook, WebhookDelivery } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { listenHttps } from '../support/httpsListener';
import { startStack, type Stack } from '../support/stack';
import { startWebhookReceiver, verifyStandardWebhook } from '../support/webhookReceiver';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

describe('webhooks over HTTPS: signed, retried, per project', () => {
  let stack: Stack;
  let https: { url: string; ca: string; close(): Promise<void> };
  let key: string;
  let otherKey: string;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    stack = await startStack({
      env: {
        MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true',
        MEMEX_WEBHOOK_RETRY_DELAYS_MS: '200,400',
        MEMEX_WEBHOOK_TIMEOUT_MS: '1000',
        MEMEX_WEBHOOK_DISABLE_AFTER_MS: '2000',
      },
    });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key } = await stack.project('hooks'));
    ({ key: otherKey } = await stack.project('other'));
  }, 60_000);
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await https?.close();
    await stack?.stop();
  });

  const call = <T = unknown>(method: string, path: string, options: { key?: string; body?: unknown } = {}) =>
    httpsJson<T>(method, `${https.url}${path}`, { ca: https.ca, key, ...options });
  const receiver = async (...args: Parameters<typeof startWebhookReceiver>) => {
    const r = await startWebhookReceiver(...args);
    receivers.push(r);
    return r;
  };
  const createWebhook = async (body: Record<string, unknown>, k = key) => {
    const res = await call<{ webhook_id: string; url: string; events: string[]; secret: string; created_at: string }>('POST', '/api/v1/webhooks', { body, key: k });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const createMemo = async (title: string, k = key) => {
    const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { body: { title, content: `${title}: some words about rivers and boats.` }, key: k });
    expect(res.status, res.text).toBe(200);
    return res.body.memo_uuid;
  };
  const deliveries = async (webhookId: string) => {
    const res = await call<{ results: WebhookDelivery[] }>('GET', `/api/v1/webhooks/${webhookId}/deliveries`);
    expect(res.status, res.text).toBe(200);
    return res.body.results;
  };

  it('registers a webhook, shows its secret once, and delivers memo.processed signed the Standard Webhooks way', async () => {
    const r = await receiver();
    const other = await receiver();
    const hook = await createWebhook({ url: `${r.url}/hook`, events: ['memo.created', 'memo.processed'], description: 'local' });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(hook).toMatchObject({ url: `${r.url}/hook`, events: ['memo.created', 'memo.processed'] });
    await createWebhook({ url: other.url, events: ['*'] }, otherKey);

    const listed = await call<{ results: Webhook[] }>('GET', '/api/v1/webhooks');
    expect(listed.body.results).toEqual([
      { webhook_id: hook.webhook_id, url: hook.url, events: hook.events, description: 'local', created_at: hook.created_at, disabled: false, disabled_reason: null },
    ]);
    expect(listed.text).not.toContain(hook.secret);

    const memoId = await createMemo('Delivered');
    const got = await eventually(() => {
      const bodies = r.received.map((x) => JSON.parse(x.body) as FeedEvent);
      return bodies.some((b) => b.memo_uuid === memoId && b.type === 'memo.processed') ? r.received : undefined;
    }, 15_000);
    for (const delivery of got) {
      expect(verifyStandardWebhook(hook.secret, delivery.headers, delivery.body)).toBe(true);
      // Tampering is detected by the same independent check.
      expect(verifyStandardWebhook(hook.secret, delivery.headers, `${delivery.body} `)).toBe(false);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.path).toBe('/hook');
    }
    const events = got.map((x) => JSON.parse(x.body) as FeedEvent);
    expect(events.map((e) => e.type)).toEqual(['memo.created', 'memo.processed']);
    expect(got.map((x) => x.headers['webhook-id'])).toEqual(events.map((e) => e.id));
    // The delivered JSON is the feed's event.
    const feed = await call<{ events: FeedEvent[] }>('GET', '/api/v1/events?types=memo.created,memo.processed');
    expect(feed.body.events).toEqual(events);

    const records = await eventually(async () => {
      const list = await deliveries(hook.webhook_id);
      return list.length >= 2 ? list : undefined;
    });
    expect(records.map((d) => [d.event_id, d.attempt, d.status, d.response_status])).toEqual([
      [events[1]!.id, 1, 'delivered', 200],
      [events[0]!.id, 1, 'delivered', 200],
    ]);
    // The other project's receiver got nothing of this project.
    await new Promise((res) => setTimeout(res, 300));
    expect(other.received).toEqual([]);
  });

  it('retries a failing receiver after the configured delays until it answers 2xx', async () => {
    const attempts = new Map<string, number>();
    const r = await receiver((req, res) => {
      const id = String(req.headers['webhook-id']);
      const n = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, n);
      res.statusCode = n < 3 ? 503 : 204;
      res.end();
    });
    const hook = await createWebhook({ url: r.url, events: ['memo.created'] });
    const memoId = await createMemo('Retried');
    const got = await eventually(() => (r.received.length >= 3 ? r.received : undefined), 10_000);
    expect(got.map((x) => (JSON.parse(x.body) as FeedEvent).memo_uuid)).toEqual([memoId, memoId, memoId]);
    // One event id for every attempt (receivers dedupe by it), and each one signed afresh.
    expect(new Set(got.map((x) => x.headers['webhook-id'])).size).toBe(1);
    for (const x of got) expect(verifyStandardWebhook(hook.secret, x.headers, x.body)).toBe(true);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(180);
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(380);
    const records = await eventually(async () => {
      const list = await deliveries(hook.webhook_id);
      return list.length >= 3 ? list : undefined;
    });
    expect(records.map((d) => [d.attempt, d.status, d.response_status])).toEqual([
      [3, 'delivered', 204],
      [2, 'retrying', 503],
      [1, 'retrying', 503],
    ]);
    expect(records[1]!.error).toBe('receiver answered 503');
  });

  it('marks a delivery failed after the last retry, keeps later events flowing, and disables a webhook failing that long', async () => {
    const r = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end('down');
    });
    const hook = await createWebhook({ url: r.url, events: ['memo.created'] });
    const first = await createMemo('Never delivered');
    await eventually(async () => (await deliveries(hook.webhook_id)).some((d) => d.status === 'failed'), 10_000, 200);
    // Past the disable window (2 s here): the next failure disables the webhook.
    await new Promise((res) => setTimeout(res, 2_100));
    const second = await createMemo('Still sent');
    const listed = await eventually(async () => {
      const res = await call<{ results: Webhook[] }>('GET', '/api/v1/webhooks');
      const mine = res.body.results.find((w) => w.webhook_id === hook.webhook_id);
      return mine?.disabled ? mine : undefined;
    }, 10_000, 200);
    expect(listed.disabled_reason).toMatch(/^every delivery since .* failed$/);
    const bodies = r.received.map((x) => (JSON.parse(x.body) as FeedEvent).memo_uuid);
    expect(bodies.filter((id) => id === first)).toHaveLength(3);
    expect(bodies).toContain(second);
    const records = await deliveries(hook.webhook_id);
    expect(records.filter((d) => d.status === 'failed')).toHaveLength(1);
    expect(records.at(-1)).toMatchObject({ attempt: 1, status: 'retrying', response_status: 500 });
    // Disabled: nothing more is sent.
    await new Promise((res) => setTimeout(res, 300));
    const before = r.received.length;
    await createMemo('After disable');
    await new Promise((res) => setTimeout(res, 1_000));
    expect(r.received.length).toBe(before);
  }, 60_000);

  it('deletes a webhook (204), after which it is gone and gets nothing; another project cannot touch it', async () => {
    const r = await receiver();
    const hook = await createWebhook({ url: r.url, events: ['*'] });
    expect((await call('DELETE', `/api/v1/webhooks/${hook.webhook_id}`, { key: otherKey })).status).toBe(404);
    expect((await call('GET', `/api/v1/webhooks/${hook.webhook_id}/deliveries`, { key: otherKey })).status).toBe(404);
    const del = await call('DELETE', `/api/v1/webhooks/${hook.webhook_id}`);
    expect(del.status).toBe(204);
    const again = await call<{ error: string }>('DELETE', `/api/v1/webhooks/${hook.webhook_id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('Webhook not found');
    expect((await call<{ results: Webhook[] }>('GET', '/api/v1/webhooks')).body.results.map((w) => w.webhook_id)).not.toContain(hook.webhook_id);
    await createMemo('Nobody listens');
    await new Promise((res) => setTimeout(res, 1_000));
    expect(r.received).toEqual([]);
    expect((await call('GET', '/api/v1/webhooks/not-a-uuid/deliveries')).status).toBe(404);
  });

  it('refuses bad registrations with a 400 that says why', async () => {
    for (const [body, message] of [
      [{ events: ['*'] }, 'url is required'],
      [{ url: 'ftp://example.com', events: ['*'] }, 'url must use https'],
      [{ url: 'not a url', events: ['*'] }, 'url must be an absolute URL'],
      [{ url: 'https://example.com' }, 'events must be a non-empty list'],
      [{ url: 'https://example.com', events: ['memo.nope'] }, 'unknown event type'],
      [{ url: 'https://example.com', events: ['*'], description: 5 }, 'description must be a string'],
    ] as const) {
      const res = await call<{ error: string }>('POST', '/api/v1/webhooks', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(message);
    }
  });
});

describe('webhook URLs without MEMEX_WEBHOOK_ALLOW_PRIVATE', () => {
  let stack: Stack;
  let https: { url: string; ca: string; close(): Promise<void> };
  let key: string;

  beforeAll(async () => {
    stack = await startStack({ indexer: false });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key } = await stack.project('strict'));
  }, 60_000);
  afterAll(async () => {
    await https?.close();
    await stack?.stop();
  });

  it('refuses http, and https to loopback, private, link-local and metadata addresses, by literal or by name', async () => {
    for (const [url, message] of [
      ['http://example.com/hook', 'url must use https'],
      ['https://127.0.0.1/hook', 'The webhook URL resolves to an address that is not allowed: 127.0.0.1 resolves to 127.0.0.1'],
      ['https://localhost:8443/hook', 'The webhook URL resolves to an address that is not allowed: localhost resolves to'],
      ['https://[::1]/hook', 'not allowed'],
      ['https://10.0.0.8/hook', 'not allowed'],
      ['https://192.168.1.20/hook', 'not allowed'],
      ['https://169.254.169.254/latest/meta-data', 'not allowed'],
      ['https://[::ffff:127.0.0.1]/hook', 'not allowed'],
    ] as const) {
      const res = await httpsJson<{ error: string }>('POST', `${https.url}/api/v1/webhooks`, { ca: https.ca, key, body: { url, events: ['*'] } });
      expect(res.status, url).toBe(400);
      expect(res.body.error, url).toContain(message);
    }
    const listed = await httpsJson<{ results: unknown[] }>('GET', `${https.url}/api/v1/webhooks`, { ca: https.ca, key });
    expect(listed.body.results).toEqual([]);
  });
});
