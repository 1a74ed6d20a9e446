/**
 * Tried as a new user would (issue 49), in Chromium: a client's app on its own origin, with a
 * backend that mints one token per signed-in end user (POST /api/v1/project/tokens with its key
 * that holds keys:admin). Each end user's page calls Memex directly with `fetch` and
 * `Authorization: Bearer <token>` (a cross-origin call the gateway allows by MEMEX_CORS_ORIGINS),
 * searches and chats, and sees only that user's memos; a page on an origin not allowed gets
 * nothing; the owner's audit trail shows who read what, down to the request ids the pages saw.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { startAccessStack, user, type AccessStack, type Json } from '../../../test/support/accessStack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The client's page: asks its own backend for a token, then calls Memex with it, nothing else. */
const PAGE = (memex: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Notes app</title></head><body>
<h1>My notes</h1>
<form id="search"><label>Search <input name="q"></label><button>Search</button></form>
<ol id="results" aria-label="Results"></ol>
<form id="chat"><label>Ask <input name="q"></label><button>Ask</button></form>
<p id="answer"></p><ul id="citations" aria-label="Citations"></ul>
<p id="error" role="alert"></p>
<script type="module">
const MEMEX = ${JSON.stringify(memex)};
const { token } = await (await fetch('/token' + location.search)).json();
window.requestIds = [];
async function memex(path, body) {
  const res = await fetch(MEMEX + path, { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  window.requestIds.push(res.headers.get('x-request-id'));
  const json = await res.json();
  if (!res.ok) throw new Error(json.error + ' (' + res.status + ')');
  return json;
}
const item = (list, id, text) => { const li = document.createElement('li'); li.dataset.memo = id; li.textContent = text; list.append(li); };
const run = (form, work) => form.addEventListener('submit', async (e) => {
  e.preventDefault();
  try { await work(new FormData(form).get('q')); } catch (err) { document.getElementById('error').textContent = String(err.message); }
});
run(document.getElementById('search'), async (query) => {
  const { results } = await memex('/api/v1/search', { query, search_method: 'chunk_vector_search', limit: 10 });
  for (const r of results) item(document.getElementById('results'), r.memo_uuid, r.memo_title);
});
run(document.getElementById('chat'), async (query) => {
  const answer = await memex('/api/v1/chat', { query });
  document.getElementById('answer').textContent = answer.response;
  for (const c of answer.citations) item(document.getElementById('citations'), c.memo_uuid, c.memo_uuid);
});
</script></body></html>`;

describe('end users of a client’s app call Memex from their browsers with their own tokens', () => {
  let access: AccessStack;
  let app: Server;
  let appPort: number;
  let browser: Browser;
  let backendKey: Json;
  const minted: string[] = [];
  /** The x-request-id of each end user's calls, as their page read them. */
  const requestIds = new Map<string, string[]>();

  beforeAll(async () => {
    // The client's app server: its page, and its backend's token endpoint (the user from the session; here the query).
    app = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://app');
      if (url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE(access.url));
        return;
      }
      if (url.pathname === '/token') {
        const uid = url.searchParams.get('user') ?? '';
        void access.api('POST', '/api/v1/project/tokens', backendKey.api_key, { scopes: ['search', 'chat'], filters: [user(uid)], ttl_s: 900, subject: uid }).then((r) => {
          minted.push(uid);
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
        });
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as AddressInfo).port;
    access = await startAccessStack({
      env: { MEMEX_CORS_ORIGINS: `http://127.0.0.1:${appPort}` },
      project: 'notes-app',
      memos: [
        { name: 'a1', user: 'u1', title: 'Ana: garden plan', content: 'Plant the tomatoes in May, after the last frost. Water the garden every morning.' },
        { name: 'a2', user: 'u1', title: 'Ana: seed order', content: 'Order tomato and basil seeds for the garden before April.' },
        { name: 'b1', user: 'u2', title: 'Ben: garden notes', content: 'The garden needs a new fence; the tomatoes did badly last summer.' },
      ],
    });
    backendKey = await access.createKey(access.owner, { name: 'notes backend', scopes: ['keys:admin', 'search', 'chat'] });
    await eventually(async () => {
      for (const id of Object.values(access.memos)) if ((await access.api('GET', `/api/v1/memo/${id}`, access.owner)).body.pending !== false) return undefined;
      return true;
    }, 60_000);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await access?.stop();
  });

  /** One end user's browser (its own context: nothing shared with another user's). */
  const open = async (origin: string, uid: string): Promise<Page> => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${origin}/?user=${uid}`);
    return page;
  };
  const ask = async (page: Page, form: 'search' | 'chat', query: string) => {
    await page.locator(`#${form} input`).fill(query);
    await page.locator(`#${form} button`).click();
  };
  const own = (uid: string) => (uid === 'u1' ? [access.memos.a1, access.memos.a2] : [access.memos.b1]);

  it('each end user searches and chats directly, and sees only their own memos', async () => {
    for (const uid of ['u1', 'u2']) {
      const page = await open(`http://127.0.0.1:${appPort}`, uid);
      await ask(page, 'search', 'garden tomatoes');
      const results = page.getByRole('list', { name: 'Results' }).locator('li');
      await results.first().waitFor({ timeout: 15_000 });
      const found = await results.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-memo')));
      expect(new Set(found), uid).toEqual(new Set(own(uid)));
      await ask(page, 'chat', 'When do I plant the tomatoes?');
      await expect.poll(() => page.locator('#answer').textContent(), { timeout: 20_000 }).not.toBe('');
      for (const id of await page.getByRole('list', { name: 'Citations' }).locator('li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-memo')))) expect(own(uid)).toContain(id);
      expect(await page.getByRole('alert').textContent()).toBe('');
      // The page read the request ids (exposed across origins), for the audit check below.
      const ids = await page.evaluate<string[]>('window.requestIds');
      expect(ids).toHaveLength(2);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
      requestIds.set(uid, ids);
      await page.context().close();
    }
    expect(minted).toEqual(['u1', 'u2']);
  }, 60_000);

  it('refuses a page of an origin the gateway does not allow: the browser gets nothing', async () => {
    // localhost and 127.0.0.1 are different origins; only the latter is allowed.
    const page = await open(`http://localhost:${appPort}`, 'u1');
    await ask(page, 'search', 'garden tomatoes');
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/Failed to fetch/);
    expect(await page.getByRole('list', { name: 'Results' }).locator('li').count()).toBe(0);
    await page.context().close();
  });

  it('shows the owner who read what: each end user’s searches and chats, their memos only', async () => {
    const entries = await eventually(async () => {
      const res = await access.api('GET', `/api/v1/audit?key_id=${backendKey.key_id}&limit=1000`, access.owner);
      const found = (res.body.results as Json[]).filter((e) => e.action === 'search' || e.action === 'chat');
      return found.length >= 4 ? found : undefined;
    }, 5_000);
    for (const uid of ['u1', 'u2']) {
      const mine = entries.filter((e) => e.subject === uid);
      expect(mine.map((e) => [e.action, e.status])).toEqual([
        ['search', 200],
        ['chat', 200],
      ]);
      expect(mine.map((e) => e.request_id)).toEqual(requestIds.get(uid));
      expect(new Set(mine[0]!.memo_ids)).toEqual(new Set(own(uid)));
      for (const id of mine[1]!.memo_ids) expect(own(uid)).toContain(id);
    }
    // The refused origin's call never reached the API as that page: the browser stopped at the preflight.
    expect(entries.filter((e) => e.subject === 'u1')).toHaveLength(2);
  });
});
