/**
 * `pnpm compose:up` / `compose:memex` / `compose:down` as a user types them (deploy/compose.ts),
 * on the embedded Compose stack (deploy/compose/docker-compose.embedded.yml): it comes up on
 * $MEMEX_PORT over HTTPS, the CLI inside it makes a project, the user's path works, and down
 * leaves no container, volume or network behind.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '@memex/testing';
import { composeDown, composeExec, composeMemex } from '../../deploy/compose';
import { findEngine } from '../../deploy/engine';
import { imageTag, LOCAL_NATS } from '../../deploy/images';
import { SERVICE_NAMES } from '../../deploy/services';
import { runTs } from '../support/processes';
import { describeWithImages } from './support/docker';
import { httpsApi, memoSearchChatFlow, waitForKey, type Api } from './support/flow';

describeWithImages('the embedded Compose stack (pnpm compose:up)', [...SERVICE_NAMES.map(imageTag), LOCAL_NATS], () => {
  const project = `memex-test-${randomUUID().slice(0, 8)}`;
  let port: number;
  let api: Api;
  let key: string;

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
    const cert = composeExec('gateway', ['cat', '/data/tls/cert.pem'], { project, stdio: 'pipe' });
    expect(cert.status, cert.stderr).toBe(0);
    api = httpsApi(`https://localhost:${port}`, cert.stdout);
    await waitForKey(api, key);
  });

  it('stores, processes, finds and discusses a memo over HTTPS', async () => {
    await memoSearchChatFlow(api, key, { expectCitation: true, processingTimeoutMs: 120_000 });
  });

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
