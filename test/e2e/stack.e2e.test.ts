/**
 * The whole stack as a user runs it: `pnpm start`'s script, compiled and run with plain node
 * (separate processes, its own nats-server), the `memex` CLI for a key, and HTTPS calls that verify
 * the self-signed certificate. What is particular to `pnpm start` is here; the API itself is tested
 * end to end in api.e2e.test.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort, tempDir, waitForPort } from '@memex/testing';
import { httpsJson } from '../support/https';
import { exited, runTs, spawnStart } from '../support/processes';

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
    stack = await spawnStart([], env);
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

  it('does not speak plain HTTP', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', timeout: 3_000 }, (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end();
    });
    expect(outcome).toMatch(/^error/);
  });

  it('stops every process on SIGINT', async () => {
    stack.kill('SIGINT');
    const code = await Promise.race([exited(stack), new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code).toBe(0);
    await expect(waitForPort(port, 500)).rejects.toThrow();
    await expect(waitForPort(natsPort, 500)).rejects.toThrow();
  }, 30_000);
});
