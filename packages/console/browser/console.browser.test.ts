/**
 * The console in a real browser: Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium) driven
 * by playwright-core, against a whole in-process stack (extractor included) served over HTTPS.
 * Each page's screenshot is written to a temporary directory and checked to be a PNG of the
 * viewport, so a run leaves the tree as it found it. `MEMEX_UPDATE_SCREENSHOTS=1 pnpm test:browser`
 * writes them to docs/ instead, refreshing the pictures the docs show.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadExtractorConfig, startExtractorService, type ExtractorService } from '@memex/extractor';
import { consoleBuilt } from '@memex/console';
import { silentLogger } from '@memex/runtime';
import { listenHttps } from '../../../test/support/httpsListener';
import { REPO_ROOT, startStack, type Stack } from '../../../test/support/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const VIEWPORT = { width: 1280, height: 800 };
const UPDATE_SCREENSHOTS = process.env.MEMEX_UPDATE_SCREENSHOTS === '1';
const SHOTS_DIR = UPDATE_SCREENSHOTS ? join(REPO_ROOT, 'docs') : mkdtempSync(join(tmpdir(), 'memex-console-shots-'));
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Takes the page's screenshot and checks the file is a PNG of the viewport's size, not empty. */
async function shot(page: Page, name: string): Promise<void> {
  const path = join(SHOTS_DIR, `console-${name}.png`);
  await page.screenshot({ path, fullPage: false });
  const png = readFileSync(path);
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE), `${path} is a PNG`).toBe(true);
  // IHDR is the first chunk: width and height are its first two big-endian words.
  expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual(VIEWPORT);
  expect(png.length, `${path} holds an image`).toBeGreaterThan(10_000);
}

describe('the console in Chromium', () => {
  let stack: Stack;
  let extractor: ExtractorService;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let context: BrowserContext;
  let page: Page;
  let key: string;
  let profile: string;

  beforeAll(async () => {
    if (!consoleBuilt()) throw new Error('the console is not built: run pnpm build:console');
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '6000' } });
    extractor = await startExtractorService(loadExtractorConfig(stack.env), { logger: silentLogger() });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key } = await stack.project('console-demo'));
    const api = { authorization: `Bearer ${key}` };
    // Some memos to show.
    for (const [title, content, tags] of [
      ['Harbour logistics', 'Container ships unload at the cranes. Trucks carry containers inland to the rail yard.', ['ops']],
      ['Night shift roster', 'The night shift runs the cranes from 22:00 to 06:00. Two pilots stay on call for arriving ships.', ['people']],
    ] as const) {
      const res = await stack.app.inject({ method: 'POST', url: '/api/v1/memo', headers: api, payload: { title, content, tags, source: 'handbook' } });
      expect(res.statusCode, res.body).toBe(200);
    }
    profile = mkdtempSync(join(tmpdir(), 'memex-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      ignoreHTTPSErrors: true,
      viewport: VIEWPORT,
      colorScheme: 'light',
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (dialog) => void dialog.accept());
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    if (!UPDATE_SCREENSHOTS) rmSync(SHOTS_DIR, { recursive: true, force: true });
    await https?.close();
    await extractor?.stop();
    await stack?.stop();
  });

  it('shows the API’s message for a wrong key and keeps the key out of the URL', async () => {
    await page.goto(`${https.url}/console/`);
    await page.getByLabel('API key or organization token').fill('mxp_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid API key (HTTP 403)');
    expect(page.url()).not.toContain('mxp_');
    await shot(page, 'signin');
  });

  it('signs in with a project key and lists the memos with their status', async () => {
    await page.getByLabel('API key or organization token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Memos' }).waitFor();
    expect(await page.evaluate<string | null>("sessionStorage.getItem('memex.session')")).toContain(key);
    expect(page.url()).not.toContain(key);
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return page.locator('.badge-processed').count();
    }, { timeout: 20_000 }).toBe(2);
  });

  it('uploads a file with progress and sees it reach processed', async () => {
    await page.getByTestId('upload-input').setInputFiles({
      name: 'tides.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Tide tables\n\nHigh tide at the harbour mouth comes twice a day. Pilots board ships at slack water.\n'),
    });
    await page.getByRole('link', { name: 'uploaded' }).waitFor({ timeout: 20_000 });
    expect(await page.getByLabel('Upload of tides.md').getAttribute('value')).toBe(await page.getByLabel('Upload of tides.md').getAttribute('max'));
    const row = page.getByRole('row').filter({ hasText: 'tides.md' });
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return row.locator('.badge').textContent();
    }, { timeout: 30_000 }).toBe('processed');
    await shot(page, 'memos');
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Chunks (1)' }).waitFor();
    await expect.poll(() => page.locator('pre.content').textContent()).toContain('Pilots board ships at slack water');
    await expect.poll(() => page.getByRole('cell', { name: 'MemoCreated' }).count()).toBeGreaterThan(0);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download original' }).click();
    expect((await download).suggestedFilename()).toBe('tides.md');
    await shot(page, 'memo');
  });

  it('searches and shows the fused score with its lexical and dense parts, the chunk highlighted, and the curl', async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Query').fill('cranes night shift');
    await page.getByRole('button', { name: 'Search' }).click();
    const score = page.getByTestId('score').first();
    await score.waitFor();
    expect(await score.textContent()).toMatch(/score \d\.\d{3} = lexical \d\.\d{3} \+ dense \d\.\d{3}/);
    expect(await page.locator('.results mark').count()).toBeGreaterThan(0);
    await page.getByText('Equivalent curl').click();
    const curl = await page.getByTestId('curl').textContent();
    expect(curl).toContain(`${https.url}/api/v1/search`);
    expect(curl).toContain('"query":"cranes night shift"');
    expect(curl).not.toContain(key);
    await shot(page, 'search');
  });

  it('streams a chat answer token by token and follows a citation to the cited chunk', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Ask').fill('When does the night shift run the cranes?');
    // Count how often the answer's text changes while it streams.
    await page.evaluate(`window.textChanges = 0;
      new MutationObserver(() => window.textChanges++).observe(document.querySelector('.turns'), { subtree: true, characterData: true, childList: true });`);
    const sse = page.waitForResponse((res) => res.url().endsWith('/api/v1/chat') && (res.headers()['content-type'] ?? '').includes('text/event-stream'));
    await page.getByRole('button', { name: 'Send' }).click();
    await sse;
    const sources = page.getByRole('list', { name: 'Sources' });
    await sources.waitFor({ timeout: 20_000 });
    expect(await page.evaluate<number>('window.textChanges')).toBeGreaterThan(3);
    expect(await page.locator('.turn.model p').first().textContent()).toMatch(/22:00/);
    await page.getByRole('button', { name: 'Continue' }).waitFor();
    await page.locator('.chat-list a').first().waitFor();
    await shot(page, 'chat');
    await page.locator('a.cite').first().click();
    await page.locator('.chunks li.focused').waitFor();
    expect(page.url()).toMatch(/#\/memos\/[0-9a-f-]{36}\?chunk=[0-9a-f-]{36}$/);
  });

  it('shows the project, rotates its key once, and keeps working with the new key', async () => {
    await page.getByRole('link', { name: 'Project' }).click();
    await page.getByRole('heading', { name: /Project “console-demo”/ }).waitFor();
    expect(await page.getByTestId('rate-limit').textContent()).toContain('6,000 requests per 60 s');
    expect(await page.locator('.facts').nth(2).textContent()).toContain('memex-glove-100d');
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const newKey = await page.getByTestId('new-key').textContent();
    expect(newKey).toMatch(/^mxp_/);
    expect(newKey).not.toBe(key);
    await shot(page, 'project');
    const old = await stack.app.inject({ method: 'GET', url: '/api/v1/project', headers: { authorization: `Bearer ${key}` } });
    expect(old.statusCode).toBe(403);
    await page.reload();
    await page.getByRole('heading', { name: /Project “console-demo”/ }).waitFor();
    expect(await page.getByTestId('new-key').count()).toBe(0);
  });

  it('renders in dark mode too', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('link', { name: 'Search' }).click();
    const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(13, 17, 23)');
    await page.getByLabel('Query').fill('tide pilots');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByTestId('score').first().waitFor();
    await shot(page, 'search-dark');
  });

  it('took a screenshot of every page the docs show', () => {
    const taken = readdirSync(SHOTS_DIR).filter((f) => f.startsWith('console-') && f.endsWith('.png')).sort();
    expect(taken).toEqual(['chat', 'memo', 'memos', 'project', 'search', 'search-dark', 'signin'].map((n) => `console-${n}.png`).sort());
  });
});
