/**
 * The event feed and webhooks under scoped access (issues 49 and 50), through HTTPS: the
 * `events:read` and `webhooks:admin` scopes, the feed (JSON and SSE, `types` too) confined to a
 * key's or token's space, erased memos' tombstones reaching the spaces that held them, webhooks of
 * a scoped key delivering only its space and stopping with the key, sealed secrets, and the audit.
 */
import { Agent, request } from 'node:https';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Buckets, type FeedEvent, type Webhook } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson, type HttpsResponse } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { startStack, type Stack } from '../../../test/support/stack';
import { startWebhookReceiver, verifyStandardWebhook } from '../../../test/support/webhookReceiver';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const user = (id: string, operator = 'eq') => ({ field: 'user_id', operator, value: id, filter_type: 'custom_metadata' });

describe('the event feed and webhooks under scoped access', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let agent: Agent;
  let owner: string;
  let projectId: string;
  const memos: Record<string, string> = {};
  const receivers: Awaited<ReturnType<typeof startWebhookReceiver>>[] = [];

  const api = (method: string, path: string, key: string, body?: unknown): Promise<HttpsResponse<Json>> =>
    httpsJson<Json>(method, `${https.url}${path}`, { agent, key, ...(body === undefined ? {} : { body }) });
  const createKey = async (scopes: string[], filters: unknown[] = []) => {
    const res = await api('POST', '/api/v1/project/keys', owner, { name: `k-${scopes.join('+')}`, scopes, filters });
    expect(res.status, res.text).toBe(200);
    return { key: res.body.api_key as string, keyId: res.body.key_id as string };
  };
  const createMemo = async (name: string, uid: string) => {
    const res = await api('POST', '/api/v1/memo', owner, { title: `Plan ${name}`, content: `The ${name} plan for ${uid}: otters and budgets.`, metadata: { user_id: uid } });
    expect(res.status, res.text).toBe(200);
    memos[name] = res.body.memo_uuid;
    return res.body.memo_uuid as string;
  };
  const feed = async (key: string, query = '') => {
    const res = await api('GET', `/api/v1/events?limit=1000${query}`, key);
    expect(res.status, res.text).toBe(200);
    return res.body.events as FeedEvent[];
  };
  const uidOf = (memoId: string) => Object.entries(memos).find(([, id]) => id === memoId)?.[0].split('-')[0];
  /** The events an SSE stream sends until `quietMs` pass without one; `during` runs once it is open. */
  const stream = (key: string, query: string, quietMs: number, during?: () => Promise<void>) =>
    new Promise<{ status: number; body: string; events: FeedEvent[] }>((resolve, reject) => {
      const req = request(`${https.url}/api/v1/events${query}`, { ca: https.ca, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } }, (res) => {
        let text = '';
        let timer: NodeJS.Timeout;
        const finish = () => {
          clearTimeout(timer);
          req.destroy();
          const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as FeedEvent);
          resolve({ status: res.statusCode ?? 0, body: text, events });
        };
        const quiet = () => {
          clearTimeout(timer);
          timer = setTimeout(finish, quietMs);
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          quiet();
        });
        res.on('end', finish);
        if (res.statusCode !== 200) return;
        void during?.().then(quiet, reject);
      });
      req.on('error', reject);
      req.end();
    });

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0', MEMEX_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, ca: https.ca });
    ({ key: owner, projectId } = await stack.project('events-access'));
    for (const [name, uid] of [['u1-a', 'u1'], ['u1-b', 'u1'], ['u2-a', 'u2'], ['u2-b', 'u2']] as const) await createMemo(name, uid);
    await eventually(async () => ((await feed(owner, '&types=memo.processed')).length === 4 ? true : undefined), 60_000);
  }, 120_000);

  afterAll(async () => {
    for (const r of receivers) await r.close();
    agent?.destroy();
    await https?.close();
    await stack?.stop();
  });

  it('refuses the feed (JSON and SSE) without events:read, and webhooks without webhooks:admin, with 403', async () => {
    const { key } = await createKey(['memos:read', 'search', 'keys:admin', 'audit:read'], [user('u1')]);
    const denied = { status: 403, body: { error: 'Access denied' } };
    const json = await api('GET', '/api/v1/events', key);
    expect({ status: json.status, body: json.body }).toEqual(denied);
    const sse = await stream(key, '', 200);
    expect({ status: sse.status, body: JSON.parse(sse.body) }).toEqual(denied);
    for (const [method, path, body] of [
      ['POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/x', events: ['*'] }],
      ['GET', '/api/v1/webhooks'],
      ['DELETE', '/api/v1/webhooks/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/v1/webhooks/00000000-0000-4000-8000-000000000000/deliveries'],
    ] as const) {
      const res = await api(method, path, key, body);
      expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, ...denied });
    }
    // webhooks:admin manages webhooks, but registering one reads the feed: events:read too.
    const admin = await createKey(['webhooks:admin'], [user('u1')]);
    const refused = await api('POST', '/api/v1/webhooks', admin.key, { url: 'http://127.0.0.1:9/x', events: ['*'] });
    expect({ status: refused.status, body: refused.body }).toEqual(denied);
    expect((await api('GET', '/api/v1/webhooks', admin.key)).status).toBe(200);
  });

  it('pages a scoped key’s and a token’s feed inside their space only, types filter included', async () => {
    const { key: u1 } = await createKey(['events:read'], [user('u1')]);
    const mine = await feed(u1);
    expect(mine.length).toBe(4);
    expect(new Set(mine.map((e) => uidOf(e.memo_uuid)))).toEqual(new Set(['u1']));
    expect(mine.map((e) => e.type).sort()).toEqual(['memo.created', 'memo.created', 'memo.processed', 'memo.processed']);
    const processed = await feed(u1, '&types=memo.processed');
    expect(processed.map((e) => e.memo_uuid).sort()).toEqual([memos['u1-a'], memos['u1-b']].sort());
    // Paging by one still walks the space, and `next` is the last event returned.
    const first = await api('GET', '/api/v1/events?limit=1', u1);
    expect(first.body.events).toEqual([mine[0]]);
    expect(first.body.next).toBe(mine[0]!.id);
    const second = await api('GET', `/api/v1/events?limit=1&after=${first.body.next}`, u1);
    expect(second.body.events).toEqual([mine[1]]);

    const minted = await api('POST', '/api/v1/project/tokens', owner, { scopes: ['events:read'], filters: [user('u2')], ttl_s: 300, subject: 'end-user-2' });
    expect(minted.status, minted.text).toBe(200);
    const theirs = await feed(minted.body.token);
    expect(theirs.length).toBe(4);
    expect(new Set(theirs.map((e) => uidOf(e.memo_uuid)))).toEqual(new Set(['u2']));
    // The owner sees both.
    expect((await feed(owner)).length).toBe(8);
  });

  it('streams a scoped key’s space over SSE: past events, then live ones, nothing of another space', async () => {
    const { key: u1 } = await createKey(['events:read'], [user('u1')]);
    const past = await stream(u1, '?types=memo.created', 800);
    expect(past.status).toBe(200);
    expect(past.body.startsWith(': ping\n\n')).toBe(true);
    expect(past.events.map((e) => e.memo_uuid).sort()).toEqual([memos['u1-a'], memos['u1-b']].sort());

    const last = (await feed(owner)).at(-1)!.id;
    const live = await stream(u1, `?after=${last}`, 3_000, async () => {
      await createMemo('u2-live', 'u2');
      await createMemo('u1-live', 'u1');
    });
    expect(live.events.length).toBeGreaterThan(0);
    expect(live.events.map((e) => e.memo_uuid)).toContain(memos['u1-live']);
    expect(new Set(live.events.map((e) => uidOf(e.memo_uuid)))).toEqual(new Set(['u1']));
  });

  it('brings an erased memo’s events and tombstone to the spaces that held it, and to no other', async () => {
    const { key: u1 } = await createKey(['events:read'], [user('u1')]);
    const { key: u2 } = await createKey(['events:read'], [user('u2')]);
    const { key: notU2 } = await createKey(['events:read'], [user('u2', 'neq')]);
    // Digests decide only equality: a space with `contains` does not see erased memos at all.
    const { key: fuzzy } = await createKey(['events:read'], [user('u1', 'contains')]);
    const gone = memos['u1-b']!;
    expect((await api('DELETE', `/api/v1/memo/${gone}`, owner)).status).toBe(204);
    await eventually(async () => ((await feed(owner, '&types=memo.deleted')).some((e) => e.memo_uuid === gone) ? true : undefined), 15_000);
    for (const key of [u1, notU2]) {
      const events = (await feed(key)).filter((e) => e.memo_uuid === gone);
      expect(events.map((e) => [e.type, e.client_reference_id])).toEqual([
        ['memo.created', null],
        ['memo.processed', null],
        ['memo.deleted', null],
      ]);
    }
    expect((await feed(u2)).some((e) => e.memo_uuid === gone)).toBe(false);
    const fuzzyFeed = await feed(fuzzy);
    expect(fuzzyFeed.some((e) => e.memo_uuid === gone)).toBe(false);
    expect(fuzzyFeed.some((e) => e.memo_uuid === memos['u1-a'])).toBe(true);
  });

  it('delivers a scoped key’s webhook only its space’s events, hides it from other spaces, and stops it with the key', async () => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const hooker = await createKey(['events:read', 'webhooks:admin'], [user('u1')]);
    const other = await createKey(['events:read', 'webhooks:admin'], [user('u2')]);
    const created = await api('POST', '/api/v1/webhooks', hooker.key, { url: `${receiver.url}/in`, events: ['memo.created', 'memo.processed'] });
    expect(created.status, created.text).toBe(200);
    const { webhook_id: webhookId, secret } = created.body as { webhook_id: string; secret: string };

    // The bucket keeps the secret sealed: reading it does not reveal it.
    const jsm = await jetstreamManager(stack.nc);
    const stored = await jsm.streams.getMessage(`KV_${Buckets.webhooks}`, { last_by_subj: `$KV.${Buckets.webhooks}.${projectId}.${webhookId}` });
    const raw = new TextDecoder().decode(stored!.data);
    expect(raw).not.toContain(secret.slice('whsec_'.length));
    expect(JSON.parse(raw)).toMatchObject({ filters: [user('u1')], key_id: hooker.keyId });
    expect(JSON.parse(raw).secret).toBeUndefined();

    // Listed for the owner and its own space; another space neither sees nor touches it.
    const listed = (key: string) => api('GET', '/api/v1/webhooks', key).then((r) => (r.body.results as Webhook[]).map((w) => w.webhook_id));
    expect(await listed(owner)).toContain(webhookId);
    expect(await listed(hooker.key)).toEqual([webhookId]);
    expect(await listed(other.key)).toEqual([]);
    for (const [method, path] of [
      ['GET', `/api/v1/webhooks/${webhookId}/deliveries`],
      ['DELETE', `/api/v1/webhooks/${webhookId}`],
    ] as const) {
      const res = await api(method, path, other.key);
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { error: 'Webhook not found' } });
    }

    const outside = await createMemo('u2-hook', 'u2');
    const inside = await createMemo('u1-hook', 'u1');
    await eventually(() => (receiver.received.some((r) => r.body.includes(inside) && r.body.includes('memo.processed')) ? true : undefined), 30_000);
    await eventually(async () => ((await feed(owner, '&types=memo.processed')).some((e) => e.memo_uuid === outside) ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const bodies = receiver.received.map((r) => JSON.parse(r.body) as FeedEvent);
    expect(bodies.length).toBeGreaterThan(0);
    expect(new Set(bodies.map((e) => uidOf(e.memo_uuid)))).toEqual(new Set(['u1']));
    expect(receiver.received.every((r) => verifyStandardWebhook(secret, r.headers, r.body))).toBe(true);
    expect(JSON.stringify(bodies)).not.toContain('space_');

    // Revoking the key that registered it stops it, and the listing says why.
    expect((await api('DELETE', `/api/v1/project/keys/${hooker.keyId}`, owner)).status).toBe(204);
    const count = receiver.received.length;
    const afterRevoke = await createMemo('u1-after', 'u1');
    const disabled = await eventually(async () => {
      const hook = ((await api('GET', '/api/v1/webhooks', owner)).body.results as Webhook[]).find((w) => w.webhook_id === webhookId);
      return hook?.disabled ? hook : undefined;
    }, 30_000);
    expect(disabled.disabled_reason).toBe('the key that registered it was revoked');
    await eventually(async () => ((await feed(owner, '&types=memo.processed')).some((e) => e.memo_uuid === afterRevoke) ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.slice(count).some((r) => r.body.includes(afterRevoke))).toBe(false);
  }, 120_000);

  it('records feed reads and webhook changes in the audit trail', async () => {
    const { key: u1, keyId } = await createKey(['events:read'], [user('u1')]);
    await feed(u1, '&types=memo.created');
    const created = await api('POST', '/api/v1/webhooks', owner, { url: 'http://127.0.0.1:9/audited', events: ['*'] });
    expect(created.status, created.text).toBe(200);
    expect((await api('DELETE', `/api/v1/webhooks/${created.body.webhook_id}`, owner)).status).toBe(204);
    const entries = await eventually(async () => {
      const res = await api('GET', '/api/v1/audit?limit=1000', owner);
      const results = res.body.results as Json[];
      return results.some((e) => e.action === 'webhooks.delete') && results.some((e) => e.action === 'events.read' && e.key_id === keyId) ? results : undefined;
    }, 10_000);
    const read = entries.find((e) => e.action === 'events.read' && e.key_id === keyId)!;
    expect(read.status).toBe(200);
    expect(read.memo_ids).toContain(memos['u1-a']);
    expect(read.memo_ids).not.toContain(memos['u2-a']);
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['webhooks.create', 'webhooks.delete', 'webhooks.list', 'webhooks.deliveries']));
  });
});
