/**
 * Cross-origin calls with a Bearer token (MEMEX_CORS_ORIGINS), over HTTPS: what a browser page of
 * an allowed origin needs (a preflight answered before authentication, Access-Control-Allow-Origin
 * on every answer, streamed ones and refusals included), and nothing for any other origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAccessStack, user, type AccessStack } from '../../../test/support/accessStack';

const APP = 'https://app.example.com';

describe('CORS for the allowed origins', () => {
  let access: AccessStack;
  let token: string;

  beforeAll(async () => {
    access = await startAccessStack({
      env: { MEMEX_CORS_ORIGINS: `${APP}, http://localhost:5173` },
      project: 'cors',
      memos: [{ name: 'a1', user: 'u1', title: 'Otter survey', content: 'The otter survey counted nine animals.' }],
    });
    const minted = await access.api('POST', '/api/v1/project/tokens', access.owner, { scopes: ['search', 'chat'], filters: [user('u1')], ttl_s: 600, subject: 'u1' });
    expect(minted.status, minted.text).toBe(200);
    token = minted.body.token;
  }, 120_000);

  afterAll(async () => {
    await access?.stop();
  });

  it('answers an allowed origin’s preflight with 204 before authentication', async () => {
    const res = await access.api('OPTIONS', '/api/v1/search', null, undefined, {
      origin: APP,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(String(res.headers['access-control-allow-methods']).split(', ')).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
    expect(String(res.headers['access-control-allow-headers']).split(', ')).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toBe('Origin');
    const mcp = await access.api('OPTIONS', '/mcp', null, undefined, { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' });
    expect([mcp.status, mcp.headers['access-control-allow-origin']]).toEqual([204, 'http://localhost:5173']);
  });

  it('marks answers, refusals and streams for the allowed origin, and lets it read the request id', async () => {
    const headers = { origin: APP };
    const searched = await access.api('POST', '/api/v1/search', token, { query: 'otter', search_method: 'title_contains' }, headers);
    expect(searched.status, searched.text).toBe(200);
    expect(searched.body.results.map((r: { memo_uuid: string }) => r.memo_uuid)).toEqual([access.memos.a1]);
    expect(searched.headers['access-control-allow-origin']).toBe(APP);
    expect(String(searched.headers['access-control-expose-headers'])).toContain('x-request-id');
    const refused = await access.api('POST', '/api/v1/memo', token, { title: 't', content: 'c' }, headers);
    expect([refused.status, refused.body, refused.headers['access-control-allow-origin']]).toEqual([403, { error: 'Access denied' }, APP]);
    const missing = await access.api('POST', '/api/v1/search', null, { query: 'otter', search_method: 'title_contains' }, headers);
    expect([missing.status, missing.headers['access-control-allow-origin']]).toEqual([401, APP]);
    const streamed = await access.api('POST', '/api/v1/chat', token, { query: 'How many otters?', stream: true }, headers);
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    expect(streamed.headers['access-control-allow-origin']).toBe(APP);
  });

  it('gives any other origin nothing: no preflight, no Allow-Origin', async () => {
    const preflight = await access.api('OPTIONS', '/api/v1/search', null, undefined, { origin: 'https://evil.example', 'access-control-request-method': 'POST' });
    expect(preflight.status).toBe(404);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
    const call = await access.api('POST', '/api/v1/search', token, { query: 'otter', search_method: 'title_contains' }, { origin: 'https://evil.example' });
    expect(call.status).toBe(200);
    expect(call.headers['access-control-allow-origin']).toBeUndefined();
    expect(call.headers.vary).toBe('Origin');
    // The console and health routes are same-origin only.
    const console = await access.api('GET', '/console/', null, undefined, { origin: APP });
    expect(console.headers['access-control-allow-origin']).toBeUndefined();
  });
});
