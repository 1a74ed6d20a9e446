/**
 * The console's access views in Chromium (as console.browser.test.ts runs it): an owner makes a
 * scoped key on the Keys page and sees it listed with its scopes and space; signed in with that
 * key the console hides what it may not do and shows only its memos; back as the owner, the Audit
 * page shows who read what. Screenshots go to a temporary directory, or to docs/ with
 * MEMEX_UPDATE_SCREENSHOTS=1 (access-*.png).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleBuilt } from '@memex/console';
import { eventually } from '@memex/testing';
import { startAccessStack, user, type AccessStack, type Json } from '../../../test/support/accessStack';
import { REPO_ROOT } from '../../../test/support/paths';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const VIEWPORT = { width: 1280, height: 800 };
const UPDATE_SCREENSHOTS = process.env.MEMEX_UPDATE_SCREENSHOTS === '1';
const SHOTS_DIR = UPDATE_SCREENSHOTS ? join(REPO_ROOT, 'docs') : mkdtempSync(join(tmpdir(), 'memex-access-shots-'));

async function shot(page: Page, name: string): Promise<void> {
  const path = join(SHOTS_DIR, `access-${name}.png`);
  await page.screenshot({ path, fullPage: false });
  const png = readFileSync(path);
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual(VIEWPORT);
}

describe('the console’s keys and audit pages in Chromium', () => {
  let access: AccessStack;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let scopedKey = '';
  let scopedId = '';

  const signIn = async (key: string) => {
    await page.goto(`${access.url}/console/`);
    await page.getByLabel('API key or organization token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Memos' }).waitFor();
  };
  const nav = async () => (await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).sort();

  beforeAll(async () => {
    if (!consoleBuilt()) throw new Error('the console is not built: run pnpm build:console');
    access = await startAccessStack({
      project: 'console-access',
      memos: [
        { name: 'a1', user: 'u1', title: 'Harbour cranes (u1)', content: 'Container ships unload at the cranes. Trucks carry containers inland.' },
        { name: 'a2', user: 'u1', title: 'Night shift (u1)', content: 'The night shift runs the cranes from 22:00 to 06:00.' },
        { name: 'b1', user: 'u2', title: 'Crane budget (u2)', content: 'The crane budget for next year covers two new cranes at the harbour.' },
      ],
    });
    await eventually(async () => {
      for (const id of Object.values(access.memos)) if ((await access.api('GET', `/api/v1/memo/${id}`, access.owner)).body.pending !== false) return undefined;
      return true;
    }, 60_000);
    profile = mkdtempSync(join(tmpdir(), 'memex-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, ignoreHTTPSErrors: true, viewport: VIEWPORT, colorScheme: 'light' });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (dialog) => void dialog.accept());
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    if (!UPDATE_SCREENSHOTS) rmSync(SHOTS_DIR, { recursive: true, force: true });
    await access?.stop();
  });

  it('lets an owner create a scoped key and lists it with its scopes and space', async () => {
    await signIn(access.owner);
    expect(await nav()).toEqual(['Audit', 'Chat', 'Keys', 'Memos', 'Project', 'Search', 'Webhooks']);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    const rows = page.getByTestId('keys').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('the whole project');

    await page.getByLabel('Name', { exact: true }).fill('u1 reader');
    await page.getByLabel('memos:read', { exact: true }).check();
    await page.getByLabel('search', { exact: true }).check();
    await page.getByLabel(/^Knowledge space/).fill(JSON.stringify([user('u1')]));
    await page.getByRole('button', { name: 'Create key' }).click();
    scopedKey = (await page.getByTestId('created-key').textContent()) ?? '';
    expect(scopedKey).toMatch(/^mxp_/);
    const row = rows.filter({ hasText: 'u1 reader' });
    await row.waitFor();
    scopedId = (await row.getAttribute('data-key-id')) ?? '';
    expect(scopedId).toMatch(/^[0-9a-f]{16}$/);
    const cells = await row.locator('td').allTextContents();
    expect(cells[1]).toBe('memos:read, search');
    expect(cells[2]).toBe('user_id eq "u1"');
    expect(cells[3]).toBe('never');
    // The secret is shown once: the list never holds it.
    expect(await page.getByTestId('keys').textContent()).not.toContain(scopedKey);
    await shot(page, 'keys');
    // What the API holds is what the page showed.
    const listed = (await access.api('GET', '/api/v1/project/keys', access.owner)).body.results.find((k: Json) => k.key_id === scopedId);
    expect(listed).toMatchObject({ name: 'u1 reader', scopes: ['memos:read', 'search'], filters: [user('u1')] });
  });

  it('signed in with the scoped key, hides what it may not do and shows only its memos', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(scopedKey);
    await expect.poll(nav).toEqual(['Memos', 'Project', 'Search']);
    await expect.poll(() => page.getByRole('row').filter({ hasText: '(u' }).allTextContents()).toHaveLength(2);
    const titles = (await page.getByRole('row').filter({ hasText: '(u' }).allTextContents()).join(' ');
    expect(titles).toContain('Harbour cranes (u1)');
    expect(titles).toContain('Night shift (u1)');
    expect(titles).not.toContain('(u2)');
    expect(await page.getByRole('button', { name: 'New memo' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Query').fill('crane budget harbour');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('list', { name: 'Results' });
    await results.locator('li.result').first().waitFor();
    const found = await results.locator('li.result strong').allTextContents();
    expect(found.length).toBeGreaterThan(0);
    for (const title of found) expect(title).toMatch(/\(u1\)$/);

    await results.getByRole('link', { name: 'Harbour cranes (u1)' }).click();
    await page.getByRole('heading', { name: 'Harbour cranes (u1)' }).waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    // Another user's memo by its URL: the API's 404, as for a memo that does not exist.
    await page.goto(`${access.url}/console/#/memos/${access.memos.b1}`);
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('Memo not found (HTTP 404)');

    await page.getByRole('link', { name: 'Project' }).click();
    const facts = page.getByTestId('key-access');
    await facts.waitFor();
    expect(await facts.textContent()).toContain('memos:read, search');
    expect(await facts.textContent()).toContain('user_id eq "u1"');
    expect(await page.getByRole('button', { name: 'Rotate key' }).count()).toBe(0);
  });

  it('shows the owner who read what in the audit trail, and revokes the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(access.owner);
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await page.getByLabel('Key ID').fill(scopedId);
    await page.getByRole('button', { name: 'Filter' }).click();
    const table = page.getByTestId('audit');
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return table.locator('tbody tr[data-action="memo.read"]').count();
    }, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const actions = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')));
    expect(actions).toEqual(expect.arrayContaining(['project.read', 'memo.list', 'search', 'memo.read']));
    for (const cell of await table.locator('tbody tr td:nth-child(2)').allTextContents()) expect(cell).toBe(scopedId);
    // Every memo id the key was shown is one of u1's; the refused read of u2's memo names none.
    const shown = await table.locator('a.memo-id').evaluateAll((as) => as.map((a) => a.getAttribute('data-memo')));
    expect(shown.length).toBeGreaterThan(0);
    for (const id of shown) expect([access.memos.a1, access.memos.a2]).toContain(id);
    const reads = await table.locator('tbody tr[data-action="memo.read"]').evaluateAll((trs) => trs.map((tr) => tr.children[4]!.textContent));
    expect(reads.sort()).toEqual(['200', '404']);
    await shot(page, 'audit');

    await page.getByRole('link', { name: 'Keys' }).click();
    const row = page.getByTestId('keys').locator(`tr[data-key-id="${scopedId}"]`);
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    await eventually(async () => ((await access.api('GET', '/api/v1/memo', scopedKey)).status === 403 ? true : undefined), 2_000);
  });
});
