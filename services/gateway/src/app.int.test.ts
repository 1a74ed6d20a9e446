import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subjects, searchResponseJson, type IndexSearchHit, type IndexSearchRequest } from '@memex/contracts';
import { CommandClient, connectNats, ContentStore, Directory, DirectoryCache, EncodedJson, Keyring, Metrics, NatsBlobStore, serveQuery, silentLogger } from '@memex/runtime';
import { eventually, startNatsServer, tempDir, type NatsServerHandle } from '@memex/testing';
import { loadMemoConfig, startMemoService, type MemoService } from '@memex/memo';
import { buildGateway } from './app';
import { loadGatewayConfig } from './config';
import { RateLimiter } from './rateLimit/limiter';

describe('gateway memo routes (inject, real NATS and memo service)', () => {
  let nats: NatsServerHandle;
  let dir: ReturnType<typeof tempDir>;
  let memo: MemoService;
  let nc: NatsConnection;
  let app: FastifyInstance;
  let credentials: DirectoryCache;
  let directory: Directory;
  let key: string;
  let otherKey: string;
  let orgToken: string;
  let otherProjectId: string;
  let foreignProjectId: string;

  beforeAll(async () => {
    nats = await startNatsServer();
    dir = tempDir();
    memo = await startMemoService(loadMemoConfig({ NATS_URL: nats.url, MEMEX_DATA_DIR: dir.path }), { logger: silentLogger() });
    nc = await connectNats({ url: nats.url, name: 'gateway-test' });
    directory = await Directory.open(nc);
    const org = await directory.createOrganization('acme');
    const a = await directory.createProject('a', org.id);
    const b = await directory.createProject('b', org.id);
    const foreign = await directory.createProject('foreign');
    otherProjectId = b.project.id;
    foreignProjectId = foreign.project.id;
    key = a.apiKey;
    otherKey = b.apiKey;
    orgToken = await directory.createOrgToken(org.id);
    credentials = await DirectoryCache.start(directory, silentLogger());
    const config = loadGatewayConfig({ NATS_URL: nats.url, MEMEX_DATA_DIR: dir.path, MEMEX_RATE_LIMIT: '1000', MEMEX_CONSISTENCY_TIMEOUT_MS: '0' });
    app = await buildGateway(
      {
        config,
        nc,
        jsm: await jetstreamManager(nc),
        commands: new CommandClient(nc),
        content: new ContentStore(await NatsBlobStore.open(nc), await Keyring.open(nc)),
        credentials,
        limiter: new RateLimiter({ limit: 1000, windowMs: 60_000, instance: 'test' }),
        logger: silentLogger(),
        metrics: new Metrics(),
        instance: 'test',
      },
      { logger: silentLogger() },
    );
  });

  afterAll(async () => {
    await app?.close();
    credentials?.stop();
    await nc?.close();
    await memo?.stop();
    await nats?.stop();
    dir?.remove();
  });

  const auth = (k = key) => ({ authorization: `Bearer ${k}` });
  const post = (body: unknown, headers: Record<string, string> = auth()) =>
    app.inject({ method: 'POST', url: '/api/v1/memo', headers, payload: body as object });
  const create = async (body: Record<string, unknown> = {}) => {
    const res = await post({ title: 'Plan', content: 'We plan things.', ...body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().memo_uuid as string;
  };

  it('needs a key: none is 401, an unknown one 403', async () => {
    expect((await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}` })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}`, headers: { authorization: 'Basic abc' } })).statusCode).toBe(401);
    const bad = await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}`, headers: auth('mxp_nope') });
    expect(bad.statusCode).toBe(403);
    expect(bad.json()).toEqual({ error: 'Invalid API key' });
  });

  it('creates and reads a memo by uuid and by reference id', async () => {
    const res = await post({ title: 'Hello', content: 'World.', reference_id: 'ext-42', tags: ['a'], metadata: { k: 1 } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ ok: true, memo_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const got = await app.inject({ method: 'GET', url: `/api/v1/memo/${body.memo_uuid}`, headers: auth() });
    expect(got.statusCode).toBe(200);
    // A short memo's body goes out whole, with its length (a long one is streamed in chunks).
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(got.body)));
    expect(got.headers['transfer-encoding']).toBeUndefined();
    expect(got.json()).toMatchObject({
      uuid: body.memo_uuid,
      title: 'Hello',
      content: 'World.',
      client_reference_id: 'ext-42',
      pending: true,
      metadata: { k: 1 },
      tags: [{ tag: 'a' }],
      chunks: [],
      processing_error: null,
    });
    const byRef = await app.inject({ method: 'GET', url: '/api/v1/memo/ext-42?id_type=reference_id', headers: auth() });
    expect(byRef.json().uuid).toBe(body.memo_uuid);
  });

  it('answers 400 with the spec text for a bad id_type on GET, PATCH and DELETE', async () => {
    const id = await create();
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({ method, url: `/api/v1/memo/${id}?id_type=slug`, headers: auth(), ...(method === 'PATCH' ? { payload: { title: 'x' } } : {}) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: "id_type must be either 'memo_uuid' or 'reference_id'" });
    }
  });

  it('answers 404 Memo not found, and hides other projects\' memos on GET', async () => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}`, headers: auth() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Memo not found' });
    const theirs = await create();
    const peek = await app.inject({ method: 'GET', url: `/api/v1/memo/${theirs}`, headers: auth(otherKey) });
    expect(peek.statusCode).toBe(404);
    const byRef = await app.inject({ method: 'GET', url: '/api/v1/memo/nope?id_type=reference_id', headers: auth() });
    expect(byRef.statusCode).toBe(404);
  });

  it('refuses PATCH and DELETE of another project\'s memo with 403', async () => {
    const id = await create();
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await app.inject({ method, url: `/api/v1/memo/${id}`, headers: auth(otherKey), ...(method === 'PATCH' ? { payload: { title: 'x' } } : {}) });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Resource does not belong to the project' });
    }
  });

  it('patches and deletes', async () => {
    const id = await create({ reference_id: 'r-patch' });
    const patched = await app.inject({ method: 'PATCH', url: '/api/v1/memo/r-patch?id_type=reference_id', headers: auth(), payload: { title: 'New', source: 'web' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({ ok: true });
    const got = await app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers: auth() });
    expect(got.json()).toMatchObject({ title: 'New', source: 'web' });
    // A bodiless DELETE that still says Content-Type: application/json, as many clients send.
    const del = await app.inject({ method: 'DELETE', url: `/api/v1/memo/${id}`, headers: { ...auth(), 'content-type': 'application/json' } });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers: auth() })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/memo/${id}`, headers: auth() })).statusCode).toBe(404);
  });

  it.each([
    ['missing title', { content: 'x' }, 'Title is required'],
    ['missing content', { title: 'x' }, 'Content is required'],
    ['a long title', { title: 'x'.repeat(256), content: 'x' }, 'title must be at most 255 characters'],
    ['a long reference id', { title: 'x', content: 'x', reference_id: 'r'.repeat(256) }, 'reference_id must be at most 255 characters'],
    ['a long source', { title: 'x', content: 'x', source: 's'.repeat(256) }, 'source must be at most 255 characters'],
    ['a number title', { title: 5, content: 'x' }, 'title must be a string'],
    ['tags not a list', { title: 'x', content: 'x', tags: 'a' }, 'tags must be an array of strings'],
    ['metadata not an object', { title: 'x', content: 'x', metadata: [1] }, 'metadata must be a JSON object'],
    ['a bad date', { title: 'x', content: 'x', expiration_date: '2025-02-30' }, 'expiration_date must be an ISO 8601 date-time'],
    ['an unknown field', { title: 'x', content: 'x', colour: 'red' }, "Unknown field: 'colour'"],
  ])('rejects a create with %s', async (_name, body, text) => {
    const res = await post(body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: text });
  });

  it('accepts 255-character fields', async () => {
    await create({ title: 't'.repeat(255), reference_id: `r${'r'.repeat(254)}`, source: 's'.repeat(255) });
  });

  it('turns malformed requests into 4xx with { error }', async () => {
    const badJson = await app.inject({ method: 'POST', url: '/api/v1/memo', headers: { ...auth(), 'content-type': 'application/json' }, payload: '{"title":' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toEqual({ error: 'Request body is not valid JSON' });
    const notObject = await post([1, 2]);
    expect(notObject.statusCode).toBe(400);
    const empty = await app.inject({ method: 'POST', url: '/api/v1/memo', headers: { ...auth(), 'content-type': 'application/json' }, payload: '' });
    expect([empty.statusCode, empty.json()]).toEqual([400, { error: 'Request body must be a JSON object' }]);
    const poisoned = await app.inject({
      method: 'POST',
      url: '/api/v1/memo',
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '{"title":"x","content":"y","__proto__":{"admin":true}}',
    });
    expect(poisoned.statusCode).toBe(400);
    const text = await app.inject({ method: 'POST', url: '/api/v1/memo', headers: { ...auth(), 'content-type': 'text/plain' }, payload: 'hi' });
    expect(text.statusCode).toBe(415);
    const notUuid = await app.inject({ method: 'GET', url: '/api/v1/memo/not-a-uuid', headers: auth() });
    expect(notUuid.statusCode).toBe(400);
    expect(notUuid.json()).toEqual({ error: 'memo_id must be a UUID when id_type is memo_uuid' });
    // Above the body limit (2 × the content limit + 1 MiB by default).
    const huge = await post({ title: "x", content: "x".repeat(34 * 1024 * 1024) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toEqual({ error: 'Request body is too large' });
    const unknownRoute = await app.inject({ method: 'GET', url: '/api/v2/nothing', headers: auth() });
    expect(unknownRoute.statusCode).toBe(404);
  });

  it('keeps reference ids unique per project with 409', async () => {
    await create({ reference_id: 'uniq' });
    const again = await post({ title: 'x', content: 'y', reference_id: 'uniq' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatch(/reference_id/);
  });

  it('creates once per Idempotency-Key', async () => {
    const headers = { ...auth(), 'idempotency-key': `k-${randomUUID()}` };
    const first = await post({ title: 'Once', content: 'x' }, headers);
    const second = await post({ title: 'Once', content: 'x' }, headers);
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.json().memo_uuid).toBe(first.json().memo_uuid);
  });

  it('refuses an Idempotency-Key reused with a different body with 422, and still replays the same body', async () => {
    const headers = { ...auth(), 'idempotency-key': `k-${randomUUID()}` };
    const first = await post({ title: 'Once', content: 'x', metadata: { a: 1, b: 2 } }, headers);
    expect(first.statusCode).toBe(200);
    const other = await post({ title: 'Once', content: 'different' }, headers);
    expect(other.statusCode, other.body).toBe(422);
    expect(other.json()).toEqual({ error: 'Idempotency-Key was already used with a different request body' });
    // The same body, keys in another order, replays the first answer.
    const again = await post({ metadata: { b: 2, a: 1 }, content: 'x', title: 'Once' }, headers);
    expect(again.statusCode).toBe(200);
    expect(again.json().memo_uuid).toBe(first.json().memo_uuid);
    const read = await app.inject({ method: 'GET', url: `/api/v1/memo/${first.json().memo_uuid}`, headers: auth() });
    expect(read.json().content).toBe('x');
    // The key is scoped per project: another project may use it with any body.
    const elsewhere = await post({ title: 'Other project', content: 'y' }, { ...auth(otherKey), 'idempotency-key': headers['idempotency-key'] });
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.json().memo_uuid).not.toBe(first.json().memo_uuid);
  });

  it('lets an organization token act on its projects named by project_id, and no others', async () => {
    const tok = auth(orgToken);
    const noProject = await app.inject({ method: 'POST', url: '/api/v1/memo', headers: tok, payload: { title: 'x', content: 'y' } });
    expect(noProject.statusCode).toBe(400);
    expect(noProject.json()).toEqual({ error: 'project_id is required with token authentication' });
    const ok = await app.inject({ method: 'POST', url: `/api/v1/memo?project_id=${otherProjectId}`, headers: tok, payload: { title: 'x', content: 'y' } });
    expect(ok.statusCode).toBe(200);
    const read = await app.inject({ method: 'GET', url: `/api/v1/memo/${ok.json().memo_uuid}`, headers: auth(otherKey) });
    expect(read.statusCode).toBe(200);
    const foreign = await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}?project_id=${foreignProjectId}`, headers: tok });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual({ error: 'Access denied' });
    const keyOtherProject = await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}?project_id=${otherProjectId}`, headers: auth() });
    expect(keyOtherProject.statusCode).toBe(403);
    expect(keyOtherProject.json()).toEqual({ error: 'Access denied' });
  });

  it('stops accepting a key moments after it is revoked', async () => {
    const { project, apiKey } = await directory.createProject('temp');
    await eventually(async () => (await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}`, headers: auth(apiKey) })).statusCode === 404);
    await directory.revokeKeys(project.id);
    await eventually(async () => (await app.inject({ method: 'GET', url: `/api/v1/memo/${randomUUID()}`, headers: auth(apiKey) })).statusCode === 403, 5_000);
  });

  it('sends the indexer\'s search response on as it came, byte for byte', async () => {
    const hits: IndexSearchHit[] = [
      { memoId: randomUUID(), memoTitle: 'Fog', memoSummary: 'Signals in fog…', chunkId: randomUUID(), chunkIndex: 0, content: 'Two lines\nwith "quotes" and é.', distance: 0.25, lexical: 0.6, dense: 0.15 },
      { memoId: randomUUID(), memoTitle: 'Old', memoSummary: '', chunkId: randomUUID(), chunkIndex: 2, content: 'No parts.', distance: 0.5 },
    ];
    const asked: IndexSearchRequest[] = [];
    const indexer = serveQuery<IndexSearchRequest, unknown>(nc, {
      subject: Subjects.query.indexSearch,
      queue: 'test-indexer',
      logger: silentLogger(),
      handler: async (request) => {
        asked.push(request);
        return new EncodedJson(searchResponseJson(hits));
      },
    });
    await nc.flush();
    const res = await (async () => {
      try {
        return await app.inject({
          method: 'POST',
          url: '/api/v1/search',
          headers: auth(),
          payload: { query: 'fog', search_method: 'chunk_vector_search', limit: 2, rag_config: { vector_search: { top_k: 10, similarity_threshold: 0.2 } } },
        });
      } finally {
        indexer.unsubscribe();
      }
    })();
    expect(asked).toMatchObject([{ query: 'fog', format: 'search-response', limit: 2, candidates: 10, rerank: { topK: 2 } }]);
    expect(asked[0]!.maxDistance).toBeCloseTo(0.8);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(searchResponseJson(hits).toString('utf8'));
    expect(res.json()).toEqual({
      results: [
        { memo_title: 'Fog', memo_uuid: hits[0]!.memoId, chunk_uuid: hits[0]!.chunkId, chunk_content: 'Two lines\nwith "quotes" and é.', memo_summary: 'Signals in fog…', distance: 0.25, score: { relevance: 0.75, lexical: 0.6, dense: 0.15 } },
        { memo_title: 'Old', memo_uuid: hits[1]!.memoId, chunk_uuid: hits[1]!.chunkId, chunk_content: 'No parts.', memo_summary: '', distance: 0.5 },
      ],
    });
  });

  it('serves the OpenAPI document and the docs page', async () => {
    const doc = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(doc.statusCode).toBe(200);
    const spec = doc.json();
    expect(spec.openapi).toBe('3.1.0');
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(['/api/v1/memo', '/api/v1/memo/{memo_id}', '/api/v1/search', '/api/v1/chat', '/api/v1/chat/{chat_uuid}', '/api/v1/generate']),
    );
    expect(spec.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const page = await app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/html/);
  });
});
