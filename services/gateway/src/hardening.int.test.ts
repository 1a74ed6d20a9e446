import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { startHealthServer } from '@memex/runtime';
import { freePort } from '@memex/testing';
import { gatherMetrics } from './routes/health';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../test/support/stack';

/** Hostile-input regressions (issue 9) through the gateway app over a real stack. */
describe('gateway hardening (inject, whole stack over NATS)', () => {
  let stack: Stack;
  let headers: Record<string, string>;
  beforeAll(async () => {
    stack = await startStack({ indexer: false });
    const { key } = await stack.project();
    headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const send = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: string) =>
    stack.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
  const expectError = (res: LightMyRequestResponse, status: number, text: string | RegExp) => {
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatch(text);
  };

  it.each([
    ['922337203685477581', 'page must be less than or equal to 1000000'],
    ['9'.repeat(400), 'page must be less than or equal to 1000000'],
    ['0', 'page must be an integer greater than or equal to 1'],
    ['-1', 'page must be an integer greater than or equal to 1'],
    ['1.5', 'page must be an integer greater than or equal to 1'],
    ['1e3', 'page must be an integer greater than or equal to 1'],
  ])('refuses chat list page=%s with 400', async (page, text) => {
    expectError(await send('GET', `/api/v1/chat?page=${page}`), 400, text);
  });

  it('refuses out-of-range page_size and search limits with 400', async () => {
    expectError(await send('GET', '/api/v1/chat?page_size=101'), 400, 'page_size must be less than or equal to 100');
    expectError(await send('GET', '/api/v1/chat?page_size=1&page_size=2'), 400, 'page_size must be an integer greater than or equal to 1');
    for (const limit of ['1e308', '-1e308', '9007199254740993', '0.5']) {
      const res = await send('POST', '/api/v1/search', `{"query":"q","search_method":"title_contains","limit":${limit}}`);
      expect(res.statusCode, `${limit}: ${res.body}`).toBe(400);
    }
  });

  it('refuses metadata nested 5,000 levels deep with 400, on create and update', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    expectError(await send('POST', '/api/v1/memo', `{"title":"t","content":"c","metadata":${deep}}`), 400, 'metadata must not be nested more than 32 levels deep');
    const created = await send('POST', '/api/v1/memo', '{"title":"t","content":"c"}');
    const id = created.json().memo_uuid as string;
    expectError(await send('PATCH', `/api/v1/memo/${id}`, `{"metadata":${deep}}`), 400, 'metadata must not be nested more than 32 levels deep');
    const deepArray = `{"a":${'['.repeat(5000)}1${']'.repeat(5000)}}`;
    expectError(await send('POST', '/api/v1/memo', `{"title":"t","content":"c","metadata":${deepArray}}`), 400, /nested more than 32/);
  });

  it('accepts metadata exactly 32 levels deep and refuses 33', async () => {
    const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
    expect((await send('POST', '/api/v1/memo', `{"title":"t","content":"c","metadata":${nested(32)}}`)).statusCode).toBe(200);
    expectError(await send('POST', '/api/v1/memo', `{"title":"t","content":"c","metadata":${nested(33)}}`), 400, /nested more than 32/);
  });

  it('refuses metadata with too many keys, and filters too large in all, with 400', async () => {
    const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, 1]));
    expectError(await send('POST', '/api/v1/memo', JSON.stringify({ title: 't', content: 'c', metadata: many })), 400, 'metadata must not have more than 1000 keys and array items');
    const filters = Array.from({ length: 20 }, () => ({ field: 'a', operator: 'eq', value: 'v'.repeat(4000), filter_type: 'custom_metadata' }));
    expectError(await send('POST', '/api/v1/search', JSON.stringify({ query: 'q', search_method: 'title_contains', filters })), 400, /^Invalid filter: filters must be at most 65536 bytes/);
    const deepValue = `[${'['.repeat(5000)}"x"${']'.repeat(5000)}]`;
    const res = await send('POST', '/api/v1/chat', `{"query":"q","filters":[{"field":"a","operator":"in","value":${deepValue},"filter_type":"custom_metadata"}]}`);
    expectError(res, 400, /^Invalid filter/);
  });

  it('keeps metadata keys holding \\n and \\r exactly', async () => {
    const metadata = { 'line\nbreak': 1, 'carriage\rreturn': 'x', 'both\r\n': [true], plain: { 'in\nner': 2 } };
    const created = await send('POST', '/api/v1/memo', JSON.stringify({ title: 't', content: 'c', metadata }));
    expect(created.statusCode, created.body).toBe(200);
    const got = await send('GET', `/api/v1/memo/${created.json().memo_uuid}`);
    expect(got.json().metadata).toEqual(metadata);
  });

  it('serves /metrics on the operator port only, never on the public API listener', async () => {
    const publicMetrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
    expectError(publicMetrics, 404, 'Not found');
    const server = await startHealthServer(await freePort(), 'gateway', 'g-1', async () => ({ ready: true }), { metrics: () => gatherMetrics(stack.nc) });
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path: '/metrics' }, (r) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, type: String(r.headers['content-type']), text }));
        }).on('error', reject);
      });
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^text\/plain/);
      for (const service of ['memo', 'agent']) expect(res.text).toContain(`service="${service}"`);
    } finally {
      server.close();
    }
  });

  it('answers a malformed URL (bad percent-encoding) with 400 { error }, found by the fuzz suite', async () => {
    expectError(await send('GET', '/api/v1/memo/%E0%A4%A'), 400, 'The request URL is not valid');
    expectError(await send('GET', '/api/v1/chat/%ED%A0%80'), 400, 'The request URL is not valid');
  });

  it('answers 429 with Retry-After to an address after 20 failed authentications a minute, without slowing other clients', async () => {
    const from = (remoteAddress: string, authorization?: string) =>
      stack.app.inject({ method: 'GET', url: '/api/v1/chat', remoteAddress, headers: authorization ? { authorization } : {} });
    const attacker = '203.0.113.7';
    for (let i = 0; i < 20; i++) {
      const res = await from(attacker, i % 2 ? `Bearer guess-${i}` : undefined);
      expect(res.statusCode, res.body).toBe(i % 2 ? 403 : 401);
    }
    const blocked = await from(attacker, 'Bearer guess-21');
    expectError(blocked, 429, 'Too many failed authentications from this address; retry later');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Even a valid key from that address is refused meanwhile, so a right guess does not stand out.
    expectError(await from(attacker, headers.authorization), 429, /Too many failed authentications/);
    // Other addresses: valid keys work, and their failures are counted on their own.
    expect((await from('198.51.100.9', headers.authorization)).statusCode).toBe(200);
    expectError(await from('198.51.100.9', 'Bearer wrong'), 403, 'Invalid API key');
  });
});
