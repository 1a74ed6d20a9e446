/**
 * The SDK's feed iterator, webhook calls and verifyWebhook against a running stack (the gateway on
 * a loopback socket, as client.int.test.ts does; TLS is tested through the routes in test/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { startStack, type Stack } from '../../../test/support/stack';
import { startWebhookReceiver } from '../../../test/support/webhookReceiver';
import { MemexApiError, MemexClient, verifyWebhook, type FeedEvent } from './index';

describe('@memex/client: the event feed and webhooks', () => {
  let stack: Stack;
  let client: MemexClient;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
    const { key } = await stack.project('sdk-events');
    client = new MemexClient({ baseUrl, apiKey: key });
    receiver = await startWebhookReceiver();
  }, 90_000);
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('registers a webhook whose deliveries verifyWebhook accepts, and only as sent', async () => {
    const hook = await client.createWebhook({ url: `${receiver.url}/sdk`, events: ['memo.processed'], description: 'sdk' });
    expect(hook.secret.startsWith('whsec_')).toBe(true);
    expect((await client.listWebhooks()).map((w) => w.webhook_id)).toEqual([hook.webhook_id]);
    const { memo_uuid } = await client.createMemo({ title: 'Owls', content: 'Owls hunt at night. Their feathers make no sound.' });
    const delivery = await eventually(() => receiver.received.find((r) => (JSON.parse(r.body) as FeedEvent).memo_uuid === memo_uuid), 20_000);
    const headers = delivery.headers as Record<string, string>;
    expect(await verifyWebhook(hook.secret, headers, delivery.body)).toBe(true);
    expect(await verifyWebhook(hook.secret, new Headers(headers), delivery.body)).toBe(true);
    expect(await verifyWebhook(hook.secret, headers, delivery.body.replace('memo.processed', 'memo.deleted'))).toBe(false);
    expect(await verifyWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, headers, delivery.body)).toBe(false);
    expect(await verifyWebhook(hook.secret, headers, delivery.body, { now: Date.now() + 3_600_000 })).toBe(false);
    expect(await verifyWebhook(hook.secret, { ...headers, 'webhook-id': 'evt_other' }, delivery.body)).toBe(false);

    const deliveries = await eventually(async () => {
      const list = await client.listWebhookDeliveries(hook.webhook_id);
      return list.length > 0 ? list : undefined;
    });
    expect(deliveries[0]).toMatchObject({ attempt: 1, status: 'delivered', response_status: 200 });
    await client.deleteWebhook(hook.webhook_id);
    expect(await client.listWebhooks()).toEqual([]);
    const gone = await client.deleteWebhook(hook.webhook_id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(MemexApiError);
    expect(gone).toMatchObject({ status: 404, message: 'Webhook not found' });
  });

  it('iterates the feed to its end, and follows it live', async () => {
    const all: FeedEvent[] = [];
    for await (const event of client.events({ limit: 2 })) all.push(event);
    expect(all.map((e) => e.type)).toEqual(['memo.created', 'memo.processed']);
    expect((await client.listEvents({ types: ['memo.processed'] })).events).toEqual([all[1]]);

    const controller = new AbortController();
    const live: FeedEvent[] = [];
    const following = (async () => {
      for await (const event of client.events({ follow: true, after: all.at(-1)!.id, types: ['memo.created'], signal: controller.signal })) {
        live.push(event);
        break;
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const { memo_uuid } = await client.createMemo({ title: 'Foxes', content: 'Foxes cache food in the snow.' });
    await following;
    expect(live.map((e) => [e.type, e.memo_uuid])).toEqual([['memo.created', memo_uuid]]);
    const bad = await client.listEvents({ limit: 5000 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, message: 'limit must be an integer from 1 to 1000' });
  });
});
