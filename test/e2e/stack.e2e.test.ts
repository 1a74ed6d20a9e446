/**
 * The whole stack as a user runs it: `scripts/start.ts` (separate processes, its own nats-server),
 * the `memex` CLI for a key, and HTTPS calls that verify the self-signed certificate.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, SearchResultItem } from '@memex/contracts';
import { eventually, freePort, tempDir, waitForPort } from '@memex/testing';
import { httpsJson } from '../support/https';
import { exited, runTs, spawnTs } from '../support/processes';

describe('the stack over HTTPS, started as a user starts it', () => {
  let stack: ChildProcess;
  let dir: ReturnType<typeof tempDir>;
  let base: string;
  let ca: Buffer;
  let key: string;
  let env: Record<string, string>;
  let port: number;
  let natsPort: number;
  let output = '';

  beforeAll(async () => {
    dir = tempDir('memex-e2e-');
    port = await freePort();
    natsPort = await freePort();
    env = { MEMEX_PORT: String(port), MEMEX_DATA_DIR: dir.path, NATS_URL: `nats://127.0.0.1:${natsPort}`, LOG_LEVEL: 'warn' };
    stack = spawnTs('scripts/start.ts', [], env);
    stack.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await eventually(() => output.includes('[memex] ready'), 90_000, 200).catch((error: unknown) => {
      throw new Error(`stack did not become ready: ${(error as Error).message}\n${output}`);
    });
    base = `https://localhost:${port}`;
    ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
    const created = await runTs('packages/cli/src/main.ts', ['project', 'create', '--name', 'e2e', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const line = JSON.parse(created.stdout.trim()) as { organization_id: string; project_id: string; api_key: string };
    expect(line).toEqual({ organization_id: expect.any(String), project_id: expect.any(String), api_key: expect.stringMatching(/^mxp_/) });
    key = line.api_key;
  }, 120_000);

  afterAll(async () => {
    if (stack && stack.exitCode === null) {
      stack.kill('SIGKILL');
      await exited(stack);
    }
    dir?.remove();
  });

  /** `k = null` sends no Authorization header. */
  const api = <T>(method: string, path: string, body?: unknown, k: string | null = key) =>
    httpsJson<T>(method, `${base}${path}`, { ca, ...(k ? { key: k } : {}), ...(body === undefined ? {} : { body }) });

  it('is ready, serves its docs, and verifies as localhost with its own certificate', async () => {
    const ready = await api<{ ready: boolean }>('GET', '/readyz', undefined, null);
    expect(ready.status).toBe(200);
    expect(ready.body.ready).toBe(true);
    expect((await api('GET', '/docs/json', undefined, null)).status).toBe(200);
  });

  it('keeps metrics off the public port (they are on the operator port, MEMEX_HEALTH_PORT)', async () => {
    const metrics = await api<{ error: string }>('GET', '/metrics', undefined, null);
    expect(metrics.status).toBe(404);
    expect(metrics.body).toEqual({ error: 'Not found' });
  });

  it('does not speak plain HTTP', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', timeout: 3_000 }, (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end();
    });
    expect(outcome).toMatch(/^error/);
  });

  it('runs a memo through create, read, processing, search, patch and delete', async () => {
    expect((await api('GET', '/api/v1/memo/00000000-0000-4000-8000-000000000000', undefined, null)).status).toBe(401);
    expect((await api('GET', '/api/v1/memo/00000000-0000-4000-8000-000000000000', undefined, 'mxp_wrong')).status).toBe(403);

    const created = await api<{ ok: boolean; memo_uuid: string }>('POST', '/api/v1/memo', {
      title: 'Harbour logistics',
      content: 'Container ships unload at the harbour cranes. Trucks carry the containers inland.',
      reference_id: 'ops-1',
      tags: ['ops'],
      metadata: { region: 'north' },
    });
    expect(created.status).toBe(200);
    const id = created.body.memo_uuid;
    const byRef = await api<Memo>('GET', '/api/v1/memo/ops-1?id_type=reference_id');
    expect(byRef.status).toBe(200);
    expect(byRef.body.uuid).toBe(id);

    const done = await eventually(async () => {
      const m = await api<Memo>('GET', `/api/v1/memo/${id}`);
      return m.body.pending ? undefined : m.body;
    }, 10_000);
    expect(done.chunks.length).toBeGreaterThan(0);
    expect(done.summary).not.toBe('');

    const found = await api<{ results: SearchResultItem[] }>('POST', '/api/v1/search', {
      query: 'ships unloading containers',
      search_method: 'chunk_vector_search',
      filters: [{ field: 'region', operator: 'eq', value: 'north', filter_type: 'custom_metadata' }],
    });
    expect(found.status).toBe(200);
    expect(found.body.results[0]?.memo_uuid).toBe(id);

    const badIdType = await api('PATCH', `/api/v1/memo/${id}?id_type=nope`, { title: 'x' });
    expect(badIdType).toMatchObject({ status: 400, body: { error: "id_type must be either 'memo_uuid' or 'reference_id'" } });
    const patched = await api('PATCH', '/api/v1/memo/ops-1?id_type=reference_id', { title: 'Port logistics' });
    expect(patched).toMatchObject({ status: 200, body: { ok: true } });
    expect((await api<Memo>('GET', `/api/v1/memo/${id}`)).body.title).toBe('Port logistics');

    const deleted = await api('DELETE', `/api/v1/memo/${id}`);
    expect(deleted.status).toBe(204);
    expect(await api('GET', `/api/v1/memo/${id}`)).toMatchObject({ status: 404, body: { error: 'Memo not found' } });
  });

  it('stops every process on SIGINT', async () => {
    stack.kill('SIGINT');
    const code = await Promise.race([exited(stack), new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code).toBe(0);
    await expect(waitForPort(port, 500)).rejects.toThrow();
    await expect(waitForPort(natsPort, 500)).rejects.toThrow();
  }, 30_000);
});
