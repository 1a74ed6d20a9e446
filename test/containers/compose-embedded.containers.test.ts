/**
 * `pnpm compose:up` / `compose:memex` / `compose:down` as a user types them (deploy/compose.ts),
 * on the embedded Compose stack (deploy/compose/docker-compose.embedded.yml): it comes up on
 * $MEMEX_PORT over HTTPS, the CLI inside it makes projects, the project's own end-to-end API suite
 * passes against it, and down leaves no container, volume or network behind.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, tempDir } from '@memex/testing';
import { composeDown, composeExec, composeMemex } from '../../deploy/compose';
import { findEngine } from '../../deploy/engine';
import { imageTag, LOCAL_NATS } from '../../deploy/images';
import { SERVICE_NAMES } from '../../deploy/services';
import { runTs, runVitest } from '../support/processes';
import { describeWithImages } from './support/docker';
import { httpsApi, waitForKey, type Api } from './support/flow';

describeWithImages('the embedded Compose stack (pnpm compose:up)', [...SERVICE_NAMES.map(imageTag), LOCAL_NATS], () => {
  const project = `memex-test-${randomUUID().slice(0, 8)}`;
  let port: number;
  let api: Api;
  let key: string;
  let cert: string;

  beforeAll(async () => {
    port = await freePort();
    // As a user runs it: the package script, with MEMEX_PORT.
    const up = await runTs('deploy/compose.ts', ['up'], { MEMEX_PORT: String(port), MEMEX_COMPOSE_PROJECT: project });
    expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0);
    expect(up.stdout).toContain(`ready on https://localhost:${port}`);
  }, 600_000);

  afterAll(() => {
    composeDown({ project });
  });

  it('creates a project with `compose:memex project create --json`', async () => {
    const created = composeMemex(['project', 'create', '--name', 'compose', '--json'], { project, stdio: 'pipe' });
    expect(created.status, created.stderr).toBe(0);
    const line = JSON.parse(created.stdout.trim().split('\n').at(-1)!) as { api_key: string };
    expect(line.api_key).toMatch(/^mxp_/);
    key = line.api_key;
    const read = composeExec('gateway', ['cat', '/data/tls/cert.pem'], { project, stdio: 'pipe' });
    expect(read.status, read.stderr).toBe(0);
    cert = read.stdout;
    api = httpsApi(`https://localhost:${port}`, cert);
    await waitForKey(api, key);
  });

  it("passes the project's end-to-end API suite (test/e2e/api.e2e.test.ts) over HTTPS", async () => {
    const other = composeMemex(['project', 'create', '--name', 'compose-other', '--json'], { project, stdio: 'pipe' });
    expect(other.status, other.stderr).toBe(0);
    const otherKey = (JSON.parse(other.stdout.trim().split('\n').at(-1)!) as { api_key: string }).api_key;
    await waitForKey(api, otherKey);
    const dir = tempDir('memex-compose-e2e-');
    try {
      writeFileSync(join(dir.path, 'cert.pem'), cert);
      const suite = await runVitest(['run', 'test/e2e/api.e2e.test.ts'], {
        MEMEX_E2E_URL: `https://localhost:${port}`,
        MEMEX_E2E_CA: join(dir.path, 'cert.pem'),
        MEMEX_E2E_API_KEY: key,
        MEMEX_E2E_OTHER_API_KEY: otherKey,
      });
      expect(suite.code, suite.output.slice(-6_000)).toBe(0);
      expect(suite.output).toMatch(/Tests\s+\S*5 passed/);
    } finally {
      dir.remove();
    }
  }, 600_000);

  it('compose:down removes every container, volume and network of the stack', async () => {
    const down = await runTs('deploy/compose.ts', ['down'], { MEMEX_COMPOSE_PROJECT: project });
    expect(down.code, down.stderr).toBe(0);
    const engine = findEngine();
    if ('missing' in engine) throw new Error(engine.missing);
    const filter = engine.kind === 'podman' ? `label=io.memex.compose.project=${project}` : `label=com.docker.compose.project=${project}`;
    expect(engine.run(['ps', '--all', '--quiet', '--filter', filter]).stdout.trim()).toBe('');
    expect(engine.run(['volume', 'ls', '--quiet', '--filter', filter]).stdout.trim()).toBe('');
  });
});
