/**
 * The console's webhooks page in Chromium (as console.browser.test.ts runs it): register a webhook
 * to a local receiver, see its secret once, its deliveries, and delete it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleBuilt } from '@memex/console';
import { listenHttps } from '../../../test/support/httpsListener';
import { startStack, type Stack } from '../../../test/support/stack';
import { startWebhookReceiver, verifyStandardWebhook } from '../../../test/support/webhookReceiver';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('the console’s webhooks page in Chromium', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let context: BrowserContext;
  let page: Page;
  let key: string;
  let profile: string;

  beforeAll(async () => {
    if (!consoleBuilt()) throw new Error('the console is not built: run pnpm build:console');
    stack = await startStack({ env: { MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    https = await listenHttps(stack.app, stack.dataDir);
    receiver = await startWebhookReceiver();
    ({ key } = await stack.project('console-hooks'));
    profile = mkdtempSync(join(tmpdir(), 'memex-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (dialog) => void dialog.accept());
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    await receiver?.close();
    await https?.close();
    await stack?.stop();
  });

  it('registers a webhook, shows its secret once and its deliveries, and deletes it', async () => {
    await page.goto(`${https.url}/console/`);
    await page.getByLabel('API key or organization token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet.').waitFor();

    await page.getByLabel('URL').fill(`${receiver.url}/console`);
    await page.getByLabel('memo.created').check();
    await page.getByLabel('Description').fill('console test');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByTestId('webhook-secret').textContent();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('cell', { name: 'memo.created' }).waitFor();

    const res = await stack.app.inject({ method: 'POST', url: '/api/v1/memo', headers: { authorization: `Bearer ${key}` }, payload: { title: 'Gulls', content: 'Gulls follow the ferries.' } });
    expect(res.statusCode).toBe(200);
    await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(1);
    expect(verifyStandardWebhook(secret!, receiver.received[0]!.headers, receiver.received[0]!.body)).toBe(true);

    await page.getByRole('button', { name: `${receiver.url}/console` }).click();
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return page.getByTestId('deliveries').locator('.badge-delivered').count();
    }, { timeout: 15_000 }).toBe(1);
    expect(await page.getByTestId('deliveries').textContent()).toContain(String(receiver.received[0]!.headers['webhook-id']));

    // After a reload the secret is gone for good.
    await page.reload();
    await page.getByRole('cell', { name: 'memo.created' }).waitFor();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhooks yet.').waitFor();
  });
});
