import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedEvent } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { listenHttps } from '../support/httpsListener';
import { runTs, spawnTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { startWebhookReceiver, verifyStandardWebhook } from '../support/webhookReceiver';

// Each CLI call is a Node process with tsx: seconds apiece on a busy machine.
describe('memex events and memex webhook, over HTTPS', { timeout: 300_000 }, () => {
  let stack: Stack;
  let https: { url: string; ca: string; close(): Promise<void> };
  let key: string;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key } = await stack.project('cli-events'));
    receiver = await startWebhookReceiver();
    env = { MEMEX_URL: https.url, MEMEX_DATA_DIR: stack.dataDir, MEMEX_API_KEY: key };
  }, 90_000);
  afterAll(async () => {
    await receiver?.close();
    await https?.close();
    await stack?.stop();
  });

  const memex = (...args: string[]) => runTs('packages/cli/src/main.ts', args, env);

  it('registers a webhook, shows the feed and the deliveries, follows new events, and deletes it', async () => {
    const created = await memex('webhook', 'create', '--url', `${receiver.url}/cli`, '--events', 'memo.created,memo.processed', '--description', 'from the CLI', '--json');
    expect(created.code, created.stderr).toBe(0);
    const hook = JSON.parse(created.stdout) as { webhook_id: string; secret: string; events: string[] };
    expect(hook.events).toEqual(['memo.created', 'memo.processed']);

    const memo = await httpsJson<{ memo_uuid: string }>('POST', `${https.url}/api/v1/memo`, { ca: https.ca, key, body: { title: 'Kites', content: 'Kites fly on steady wind.' } });
    expect(memo.status).toBe(200);
    const delivered = await eventually(() => (receiver.received.length >= 2 ? receiver.received : undefined), 20_000);
    for (const d of delivered) expect(verifyStandardWebhook(hook.secret, d.headers, d.body)).toBe(true);

    const listed = await memex('webhook', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(hook.webhook_id);
    expect(listed.stdout).toContain('from the CLI');
    expect(listed.stdout).not.toContain(hook.secret);

    const events = await memex('events', '--json');
    expect(events.code, events.stderr).toBe(0);
    const lines = events.stdout.trim().split('\n').map((l) => JSON.parse(l) as FeedEvent);
    expect(lines.map((e) => [e.type, e.memo_uuid])).toEqual([
      ['memo.created', memo.body.memo_uuid],
      ['memo.processed', memo.body.memo_uuid],
    ]);
    const plain = await memex('events', '--types', 'memo.processed');
    expect(plain.stdout.trim()).toMatch(new RegExp(`^${lines[1]!.id}  \\S+  memo.processed\\s+${memo.body.memo_uuid}  rev 1$`));

    const deliveries = await memex('webhook', 'deliveries', hook.webhook_id, '--json');
    expect(deliveries.code, deliveries.stderr).toBe(0);
    expect((JSON.parse(deliveries.stdout) as { status: string }[]).map((d) => d.status)).toEqual(['delivered', 'delivered']);

    // --follow: prints what comes after --after, as it comes.
    const follow = spawnTs('packages/cli/src/main.ts', ['events', '--follow', '--json', '--after', lines[1]!.id], env);
    let out = '';
    follow.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      const next = await httpsJson<{ memo_uuid: string }>('POST', `${https.url}/api/v1/memo`, { ca: https.ca, key, body: { title: 'Sails', content: 'Sails catch the wind.' } });
      const first = await eventually(() => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as FeedEvent) : undefined), 30_000);
      expect(first).toMatchObject({ type: 'memo.created', memo_uuid: next.body.memo_uuid });
    } finally {
      follow.kill('SIGINT');
    }

    expect((await memex('webhook', 'delete', hook.webhook_id)).code).toBe(0);
    const again = await memex('webhook', 'delete', hook.webhook_id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Webhook not found');
    expect((await memex('webhook', 'list', '--json')).stdout.trim()).toBe('[]');
    const bad = await memex('events', '--types', 'memo.nope');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('types: unknown event type');
  });
});
