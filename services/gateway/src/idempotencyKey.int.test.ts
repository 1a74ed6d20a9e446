/**
 * `Idempotency-Key` on both ways of creating a memo (JSON and a multipart upload) over HTTPS: one
 * memo per key and project, and a malformed key refused with a 400 before anything is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateMemoResponse, MemoListResponse } from '@memex/contracts';
import { httpsJson } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { multipart } from '../../../test/support/multipart';
import { startStack, type Stack } from '../../../test/support/stack';

describe('Idempotency-Key over HTTPS', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    stack = await startStack({ indexer: false, env: { MEMEX_RATE_LIMIT: '1000' } });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key } = await stack.project('idempotency'));
    ({ key: otherKey } = await stack.project('idempotency-other'));
  }, 90_000);

  afterAll(async () => {
    await https?.close();
    await stack?.stop();
  });

  const upload = (idempotencyKey: string, k = key) => {
    const { payload, contentType } = multipart({ name: 'notes.txt', bytes: Buffer.from('Notes on tides and harbours.\n'), type: 'text/plain' });
    return httpsJson<CreateMemoResponse & { error?: string }>('POST', `${https.url}/api/v1/memo`, {
      key: k,
      ca: https.ca,
      raw: { bytes: payload, contentType },
      headers: { 'idempotency-key': idempotencyKey },
    });
  };
  const create = (idempotencyKey: string) =>
    httpsJson<CreateMemoResponse & { error?: string }>('POST', `${https.url}/api/v1/memo`, {
      key,
      ca: https.ca,
      body: { title: 'Tides', content: 'The tide turns twice a day.' },
      headers: { 'idempotency-key': idempotencyKey },
    });
  const count = async (k = key) => (await httpsJson<MemoListResponse>('GET', `${https.url}/api/v1/memo`, { key: k, ca: https.ca })).body.count;

  it('an upload retried with its key names the same memo, once; another project gets its own', async () => {
    const before = await count();
    const first = await upload('upload-1');
    expect(first.status, first.text).toBe(200);
    const again = await upload('upload-1');
    expect(again.status, again.text).toBe(200);
    expect(again.body.memo_uuid).toBe(first.body.memo_uuid);
    expect(again.headers.location).toBe(`/api/v1/memo/${first.body.memo_uuid}`);
    expect(await count()).toBe(before + 1);
    const elsewhere = await upload('upload-1', otherKey);
    expect(elsewhere.status, elsewhere.text).toBe(200);
    expect(elsewhere.body.memo_uuid).not.toBe(first.body.memo_uuid);
  });

  it('a JSON create and an upload with a malformed key get 400 with the error, and nothing is created', async () => {
    const before = await count();
    for (const bad of ['', 'has space', 'ü', 'k'.repeat(256)]) {
      for (const res of [await create(bad), await upload(bad)]) {
        expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400);
        expect(res.body).toEqual({ error: 'Idempotency-Key must be 1-255 visible ASCII characters' });
      }
    }
    expect(await count()).toBe(before);
  });
});
