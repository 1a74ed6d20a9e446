/**
 * Scoped access through HTTPS (issue 49): scopes, keys, tokens, knowledge spaces and the audit trail,
 * as a client's backend and its end users meet them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryCache, silentLogger } from '@memex/runtime';
import { eventually } from '@memex/testing';
import { startAccessStack, user, type AccessStack, type Json } from '../../../test/support/accessStack';

describe('scoped keys, tokens and the audit trail over HTTPS', () => {
  let access: AccessStack;
  let stack: AccessStack['stack'];
  let owner: string;
  let memos: Record<string, string>;
  let api: AccessStack['api'];
  let createKey: AccessStack['createKey'];

  beforeAll(async () => {
    access = await startAccessStack({
      env: { MEMEX_AUDIT_QUERIES: 'hash' },
      project: 'access',
      memos: (
        [
          ['a1', 'u1'],
          ['a2', 'u1'],
          ['b1', 'u2'],
          ['b2', 'u2'],
        ] as const
      ).map(([name, uid]) => ({
        name,
        user: uid,
        title: `Quarterly plan ${name}`,
        content: `The ${name} plan for ${uid}: budgets, hiring and the launch of the otter project.`,
        reference_id: `ref-${name}`,
      })),
    });
    ({ stack, owner, memos, api, createKey } = access);
  }, 120_000);

  afterAll(async () => {
    await access?.stop();
  });

  it('lists the owner key with every scope, never a secret', async () => {
    const res = await api('GET', '/api/v1/project/keys', owner);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0]).toMatchObject({ name: 'owner', filters: [], expires_at: null });
    expect(res.body.results[0].scopes).toEqual(['memos:read', 'memos:write', 'search', 'chat', 'generate', 'keys:admin', 'audit:read', 'events:read', 'webhooks:admin']);
    expect(res.text).not.toContain('mxp_');
  });

  it('refuses malformed keys with a 400 naming the field', async () => {
    const bad = async (body: Json) => (await api('POST', '/api/v1/project/keys', owner, body)).body.error as string;
    expect(await bad({ scopes: ['search'] })).toMatch(/^name is required/);
    expect(await bad({ name: 'x', scopes: ['search', 'memos:delete'] })).toMatch(/^scopes: "memos:delete" is not one of/);
    expect(await bad({ name: 'x', scopes: [] })).toMatch(/^scopes must be/);
    expect(await bad({ name: 'x', scopes: ['search'], filters: [{ field: 'tags', operator: 'eq', value: 'a', filter_type: 'native_field' }] })).toBe(
      "Invalid filter: filter 0: a tags filter must use 'in' or 'not_in' with an array value",
    );
    expect(await bad({ name: 'x', scopes: ['search'], filters: {} })).toBe('Filters must be a list');
    expect(await bad({ name: 'x', scopes: ['search'], expires_at: 'tomorrow' })).toBe('expires_at must be an ISO 8601 datetime');
    const res = await api('POST', '/api/v1/project/tokens', owner, { scopes: ['search'], ttl_s: 86_401 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('ttl_s must be an integer from 1 to 86400');
  });

  it('confines a key to its scopes: anything else is 403 Access denied', async () => {
    const { api_key: searchOnly, key_id } = await createKey(owner, { name: 'search only', scopes: ['search'] });
    expect(searchOnly).toMatch(/^mxp_/);
    expect(key_id).toMatch(/^[0-9a-f]{16}$/);
    const search = await api('POST', '/api/v1/search', searchOnly, { query: 'plan', search_method: 'title_contains' });
    expect(search.status, search.text).toBe(200);
    for (const [method, path, body] of [
      ['GET', `/api/v1/memo/${memos.a1}`],
      ['GET', '/api/v1/memo'],
      ['POST', '/api/v1/memo', { title: 't', content: 'c' }],
      ['DELETE', `/api/v1/memo/${memos.a1}`],
      ['POST', '/api/v1/chat', { query: 'plan?' }],
      ['POST', '/api/v1/generate', { prompt: 'plan' }],
      ['GET', '/api/v1/project/keys'],
      ['POST', '/api/v1/project/tokens', { scopes: ['search'], ttl_s: 60 }],
      ['GET', '/api/v1/audit'],
      ['POST', '/api/v1/project/key'],
    ] as const) {
      const res = await api(method, path, searchOnly, body);
      expect({ path, method, status: res.status, body: res.body }).toEqual({ path, method, status: 403, body: { error: 'Access denied' } });
    }
  });

  it('keeps a key inside its space on every memo route, and stamps its writes into it', async () => {
    const { api_key: u1 } = await createKey(owner, { name: 'u1 app', scopes: ['memos:read', 'memos:write', 'search'], filters: [user('u1')] });
    expect((await api('GET', `/api/v1/memo/${memos.a1}`, u1)).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', `/api/v1/memo/${memos.b1}`],
      ['GET', '/api/v1/memo/ref-b1?id_type=reference_id'],
      ['GET', `/api/v1/memo/${memos.b1}/status`],
      ['GET', `/api/v1/memo/${memos.b1}/history`],
      ['GET', `/api/v1/memo/${memos.b1}/file`],
      ['PATCH', `/api/v1/memo/${memos.b1}`, { title: 'mine now' }],
      ['DELETE', `/api/v1/memo/${memos.b1}`],
    ] as const) {
      const res = await api(method, path, u1, body);
      expect({ path, method, status: res.status, body: res.body }).toEqual({ path, method, status: 404, body: { error: 'Memo not found' } });
    }
    // What a console shows of the key: its scopes and space.
    expect((await api('GET', '/api/v1/project', u1)).body.access).toMatchObject({ owner: false, scopes: ['memos:read', 'memos:write', 'search'], filters: [user('u1')], subject: null, expires_at: null });
    expect((await api('GET', '/api/v1/project', owner)).body.access).toMatchObject({ owner: true, filters: [] });
    const list = await api('GET', '/api/v1/memo', u1);
    expect(list.body.results.map((m: Json) => m.uuid).sort()).toEqual([memos.a1, memos.a2].sort());
    // Even a filter that names the other user's space finds nothing: the space is ANDed in.
    const widened = await api('GET', `/api/v1/memo?filters=${encodeURIComponent(JSON.stringify([user('u2')]))}`, u1);
    expect(widened.body.count).toBe(0);
    const titles = await api('POST', '/api/v1/search', u1, { query: 'quarterly', search_method: 'title_contains' });
    expect(titles.body.results.map((r: Json) => r.memo_uuid).sort()).toEqual([memos.a1, memos.a2].sort());

    const created = await api('POST', '/api/v1/memo', u1, { title: 'u1 note', content: 'written by the u1 app' });
    expect(created.status, created.text).toBe(200);
    const stamped = await api('GET', `/api/v1/memo/${created.body.memo_uuid}`, owner);
    expect(stamped.body.metadata).toEqual({ user_id: 'u1' });
    const contradicting = await api('POST', '/api/v1/memo', u1, { title: 'x', content: 'y', metadata: { user_id: 'u2' } });
    expect(contradicting.status).toBe(403);
    expect(contradicting.body).toEqual({ error: 'Access denied' });
    const moveOut = await api('PATCH', `/api/v1/memo/${memos.a2}`, u1, { metadata: { user_id: 'u2' } });
    expect(moveOut.status).toBe(403);
    expect((await api('GET', `/api/v1/memo/${memos.a2}`, owner)).body.metadata).toEqual({ user_id: 'u1' });
    const stays = await api('PATCH', `/api/v1/memo/${memos.a2}`, u1, { title: 'Quarterly plan a2 (revised)' });
    expect(stays.status, stays.text).toBe(200);
  });

  it('never lets a key mint a key or token wider than itself', async () => {
    const { api_key: admin } = await createKey(owner, { name: 'u1 admin', scopes: ['keys:admin', 'search', 'chat'], filters: [user('u1')] });
    const denied = async (path: string, body: Json) => {
      const res = await api('POST', path, admin, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 403, error: 'Access denied' });
    };
    await denied('/api/v1/project/keys', { name: 'wider space', scopes: ['search'] });
    await denied('/api/v1/project/keys', { name: 'other space', scopes: ['search'], filters: [user('u2')] });
    await denied('/api/v1/project/keys', { name: 'more scopes', scopes: ['search', 'memos:read'], filters: [user('u1')] });
    await denied('/api/v1/project/tokens', { scopes: ['search'], ttl_s: 60 });
    await denied('/api/v1/project/tokens', { scopes: ['audit:read'], ttl_s: 60, filters: [user('u1')] });
    const narrower = await createKey(admin, { name: 'u1 titles', scopes: ['search'], filters: [user('u1'), { field: 'title', operator: 'contains', value: 'a1', filter_type: 'native_field' }] });
    const hits = await api('POST', '/api/v1/search', narrower.api_key, { query: 'quarterly', search_method: 'title_contains' });
    expect(hits.body.results.map((r: Json) => r.memo_uuid)).toEqual([memos.a1]);
    // A scoped admin cannot revoke the owner key either.
    const keys = await api('GET', '/api/v1/project/keys', admin);
    const ownerId = keys.body.results.find((k: Json) => k.name === 'owner').key_id;
    expect((await api('DELETE', `/api/v1/project/keys/${ownerId}`, admin)).status).toBe(403);
    expect((await api('DELETE', '/api/v1/project/keys/0000000000000000', owner)).body).toEqual({ error: 'Key not found' });
  });

  it('mints end-user tokens that see only their own memos and chats, expire, and die with their key', async () => {
    // The client's backend: a key that may mint tokens, and one token per end user.
    const backend = await createKey(owner, { name: 'backend', scopes: ['keys:admin', 'search', 'chat'] });
    const mint = async (body: Json) => {
      const res = await api('POST', '/api/v1/project/tokens', backend.api_key, body);
      expect(res.status, res.text).toBe(200);
      return res.body as { token: string; expires_at: string };
    };
    const t1 = await mint({ scopes: ['search', 'chat'], filters: [user('u1')], ttl_s: 600, subject: 'u1' });
    const t2 = await mint({ scopes: ['search', 'chat'], filters: [user('u2')], ttl_s: 600, subject: 'u2' });
    expect(Date.parse(t1.expires_at) - Date.now()).toBeGreaterThan(590_000);

    const vector = (token: string) =>
      eventually(async () => {
        const res = await api('POST', '/api/v1/search', token, { query: 'otter project launch budgets', search_method: 'chunk_vector_search' });
        return res.status === 200 && res.body.results.length > 0 ? res : undefined;
      }, 30_000);
    const inSpace = async (token: string, uid: string, expected: string[]) => {
      const found = new Set<string>((await vector(token)).body.results.map((r: Json) => r.memo_uuid));
      for (const id of expected) expect(found).toContain(id);
      for (const id of found) expect((await api('GET', `/api/v1/memo/${id}`, owner)).body.metadata.user_id).toBe(uid);
    };
    await inSpace(t1.token, 'u1', [memos.a1!, memos.a2!]);
    await inSpace(t2.token, 'u2', [memos.b1!, memos.b2!]);
    expect((await api('POST', '/api/v1/memo', t1.token, { title: 'x', content: 'y' })).status).toBe(403);

    const chat = await api('POST', '/api/v1/chat', t1.token, { query: 'What is the otter project plan?' });
    expect(chat.status, chat.text).toBe(200);
    for (const c of chat.body.citations) expect([memos.a1, memos.a2]).toContain(c.memo_uuid);
    const chatId = chat.body.chat_id as string;
    expect((await api('GET', `/api/v1/chat/${chatId}`, t1.token)).status).toBe(200);
    expect((await api('GET', `/api/v1/chat/${chatId}`, t2.token)).body).toEqual({ error: 'Chat not found' });
    expect((await api('POST', '/api/v1/chat', t2.token, { query: 'and then?', chat_id: chatId })).body).toEqual({ error: 'Chat not found' });
    const l1 = await api('GET', '/api/v1/chat', t1.token);
    expect(l1.body.results.map((c: Json) => c.uuid)).toEqual([chatId]);
    expect(l1.body.results[0]).toMatchObject({ title: 'What is the otter project plan?', message_count: 2 });
    expect((await api('GET', '/api/v1/chat', t2.token)).body).toMatchObject({ results: [], count: 0 });
    // The owner still sees every chat.
    expect((await api('GET', '/api/v1/chat', owner)).body.results.map((c: Json) => c.uuid)).toContain(chatId);

    const short = await mint({ scopes: ['search'], filters: [user('u1')], ttl_s: 1 });
    expect((await api('POST', '/api/v1/search', short.token, { query: 'plan', search_method: 'title_contains' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await api('POST', '/api/v1/search', short.token, { query: 'plan', search_method: 'title_contains' })).status).toBe(403);
    const forged = t1.token.slice(0, -2) + (t1.token.endsWith('AA') ? 'BB' : 'AA');
    expect((await api('POST', '/api/v1/search', forged, { query: 'plan', search_method: 'title_contains' })).status).toBe(403);

    // A second gateway's view of the directory (what every other instance holds), before and after.
    const otherGateway = await DirectoryCache.start(stack.directory, silentLogger());
    try {
      expect(otherGateway.authenticate(backend.api_key)).toMatchObject({ keyId: backend.key_id });
      expect(otherGateway.authenticate(t1.token)).toMatchObject({ keyId: backend.key_id, subject: 'u1' });
      const revoked = await api('DELETE', `/api/v1/project/keys/${backend.key_id}`, owner);
      expect(revoked.status).toBe(204);
      const start = Date.now();
      await eventually(async () => ((await api('POST', '/api/v1/search', t1.token, { query: 'plan', search_method: 'title_contains' })).status === 403 ? true : undefined), 2_000);
      await eventually(() => (otherGateway.authenticate(backend.api_key) === undefined && otherGateway.authenticate(t1.token) === undefined ? true : undefined), 2_000);
      expect(Date.now() - start).toBeLessThan(2_000);
    } finally {
      otherGateway.stop();
    }
    expect((await api('GET', '/api/v1/project/keys', backend.api_key)).status).toBe(403);
    expect((await api('GET', '/api/v1/project/keys', owner)).body.results.map((k: Json) => k.key_id)).not.toContain(backend.key_id);
  }, 60_000);

  it('records who read what in the audit trail, pages it and filters it', async () => {
    const { api_key: reader, key_id: readerId } = await createKey(owner, { name: 'reader', scopes: ['memos:read', 'search'], filters: [user('u2')] });
    const read = await api('GET', `/api/v1/memo/${memos.b1}`, reader);
    const searched = await api('POST', '/api/v1/search', reader, { query: 'quarterly', search_method: 'title_contains' });
    const refused = await api('GET', '/api/v1/audit', reader);
    expect(refused.status).toBe(403);
    const entries = await eventually(async () => {
      const res = await api('GET', `/api/v1/audit?key_id=${readerId}`, owner);
      return res.body.results?.length >= 3 ? (res.body.results as Json[]) : undefined;
    }, 5_000);
    expect(entries.map((e) => [e.action, e.status])).toEqual([
      ['memo.read', 200],
      ['search', 200],
      ['audit.read', 403],
    ]);
    expect(entries[0]).toMatchObject({ key_id: readerId, subject: null, memo_ids: [memos.b1], request_id: read.headers['x-request-id'] });
    expect(new Set(entries[1]!.memo_ids)).toEqual(new Set([memos.b1, memos.b2]));
    expect(entries[1]!.request_id).toBe(searched.headers['x-request-id']);
    // MEMEX_AUDIT_QUERIES=hash: the query's SHA-256, never its text.
    expect(entries[1]!.query).toMatch(/^[0-9a-f]{64}$/);

    const byMemo = await api('GET', `/api/v1/audit?memo_id=${memos.b1}&action=memo.read`, owner);
    expect(byMemo.body.results.length).toBeGreaterThanOrEqual(1);
    for (const e of byMemo.body.results) expect(e).toMatchObject({ action: 'memo.read', memo_ids: [memos.b1] });

    // Paging: one at a time, oldest first, each page after the last one's cursor, covering all.
    const all = (await api('GET', '/api/v1/audit?limit=1000', owner)).body.results as Json[];
    const paged: Json[] = [];
    let after = '';
    for (let i = 0; i < all.length; i++) {
      const page = await api('GET', `/api/v1/audit?limit=1${after ? `&after=${after}` : ''}`, owner);
      expect(page.body.results).toHaveLength(1);
      paged.push(page.body.results[0]);
      after = page.body.next;
    }
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(all.map((e) => e.at)).toEqual([...all.map((e) => e.at)].sort());
    expect(JSON.stringify(all)).not.toMatch(/otter|mxp_|mxt_/);

    // Erasing a memo leaves its id in the trail, and nothing of its content.
    const erased = await api('POST', '/api/v1/memo', owner, { title: 'Secret otter dossier', content: 'The zanzibar codeword is in here.' });
    expect((await api('DELETE', `/api/v1/memo/${erased.body.memo_uuid}`, owner)).status).toBe(204);
    const trail = await eventually(async () => {
      const res = await api('GET', `/api/v1/audit?memo_id=${erased.body.memo_uuid}`, owner);
      return res.body.results.length === 2 ? (res.body.results as Json[]) : undefined;
    }, 5_000);
    expect(trail.map((e) => e.action)).toEqual(['memo.create', 'memo.delete']);
    expect(JSON.stringify(trail)).not.toMatch(/zanzibar|dossier/i);
    expect((await api('GET', '/api/v1/audit?limit=1001', owner)).body).toEqual({ error: 'limit must be an integer from 1 to 1000' });
    expect((await api('GET', '/api/v1/audit?after=abc', owner)).body).toEqual({ error: 'after must be a cursor from an earlier answer' });
  });
});
