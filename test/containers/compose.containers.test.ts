/**
 * End to end against deploy/compose/docker-compose.yml as an operator runs it: NATS, MongoDB
 * (replica set initiated by mongodb-init), Qdrant and the four Memex images, profile `builtin`
 * (the built-in provider; MEMEX_E2E_PROFILE=ollama runs the `ollama` profile instead, with
 * OLLAMA_MODEL, default qwen2.5:0.5b). A project is created with the `cli` service
 * (`docker compose run --rm cli project create`), then a memo is stored, processed, found and
 * discussed over HTTPS, trusting the gateway's self-signed certificate.
 *
 * Needs the images (`docker buildx bake -f deploy/docker/docker-bake.hcl --load`); tags from
 * MEMEX_REGISTRY / MEMEX_TAG as in docker-bake.hcl and .env.example (default memex.local/…:dev).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Memo } from '@memex/contracts';
import { freePort } from '@memex/testing';
import { REPO_ROOT } from '../support/paths';
import { describeWithDocker, dockerEngine } from './support/docker';
import { httpsApi, memoSearchChatFlow, waitForKey, type Api } from './support/flow';

const COMPOSE_DIR = join(REPO_ROOT, 'deploy', 'compose');
const COMPOSE_FILE = 'docker-compose.yml';
const REGISTRY = process.env.MEMEX_REGISTRY || 'memex.local';
const TAG = process.env.MEMEX_TAG || 'dev';
const PROFILE = process.env.MEMEX_E2E_PROFILE === 'ollama' ? 'ollama' : 'builtin';
const IMAGES = ['gateway', 'memo', 'indexer', 'agent', 'extractor', 'cli'].map((name) => `${REGISTRY}/memex-${name}:${TAG}`);

function composePluginMissing(): string | undefined {
  if (!dockerEngine().available) return undefined;
  return spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'the Docker Compose plugin (docker compose) is not installed';
}

describeWithDocker(`the Compose stack (deploy/compose, profile ${PROFILE})`, () => {
  const missingPlugin = composePluginMissing();
  if (missingPlugin) {
    const line = `the Compose stack: skipped, ${missingPlugin}`;
    console.warn(line);
    it.skip(line, () => undefined);
    return;
  }

  const project = `memex-e2e-${randomUUID().slice(0, 8)}`;
  let environment: StartedDockerComposeEnvironment | undefined;
  let env: Record<string, string>;
  let api: Api;
  let key: string;

  /** `docker compose ...` for this project, as an operator would type it. */
  const compose = (args: string[]) =>
    spawnSync('docker', ['compose', '-p', project, '-f', join(COMPOSE_DIR, COMPOSE_FILE), '--profile', PROFILE, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 300_000,
    });

  beforeAll(async () => {
    const missing = IMAGES.filter((image) => spawnSync('docker', ['image', 'inspect', image], { stdio: 'ignore' }).status !== 0);
    if (missing.length > 0) {
      throw new Error(`images missing: ${missing.join(', ')}; build them with: docker buildx bake -f deploy/docker/docker-bake.hcl --load`);
    }
    const port = await freePort();
    env = {
      COMPOSE_PROFILES: PROFILE,
      MEMEX_REGISTRY: REGISTRY,
      MEMEX_TAG: TAG,
      MEMEX_HTTPS_BIND: '127.0.0.1',
      MEMEX_HTTPS_PORT: String(port),
      OLLAMA_MODEL: process.env.OLLAMA_MODEL || 'qwen2.5:0.5b',
      LOG_LEVEL: 'info',
    };
    environment = await new DockerComposeEnvironment(COMPOSE_DIR, COMPOSE_FILE)
      .withProjectName(project)
      .withProfiles(PROFILE)
      .withEnvironment(env)
      // The gateway's health check is its /readyz: NATS up and memo, indexer and agent answering.
      .withWaitStrategy('gateway-1', Wait.forHealthCheck())
      .withStartupTimeout(600_000)
      .up();
    const gateway = environment.getContainer('gateway-1');
    const cert = await gateway.exec(['cat', '/data/tls/cert.pem']);
    expect(cert.exitCode, cert.output).toBe(0);
    api = httpsApi(`https://localhost:${port}`, cert.stdout);
  });

  afterAll(async () => {
    if (!environment) {
      compose(['down', '--volumes', '--timeout', '5']);
      return;
    }
    await environment.down({ removeVolumes: true, timeout: 10_000 });
  });

  it('creates a project with the cli service', async () => {
    const created = compose(['--profile', 'tools', 'run', '--rm', '-T', 'cli', 'project', 'create', '--name', 'e2e', '--json']);
    expect(created.status, created.stderr).toBe(0);
    const line = JSON.parse(created.stdout.trim().split('\n').at(-1)!) as { organization_id: string; project_id: string; api_key: string };
    expect(line.api_key).toMatch(/^mxp_/);
    key = line.api_key;
    await waitForKey(api, key);
  });

  it('stores, processes, finds and discusses a memo over HTTPS', async () => {
    const { memoId } = await memoSearchChatFlow(api, key, { expectCitation: PROFILE === 'builtin', processingTimeoutMs: 180_000 });
    // The CLI inside the gateway image reaches the API on localhost, trusting the self-signed certificate.
    const read = await environment!.getContainer('gateway-1').exec(['memex', 'api', 'GET', `/api/v1/memo/${memoId}`, '--key', key]);
    expect(read.exitCode, read.output).toBe(0);
    expect((JSON.parse(read.stdout) as Memo).uuid).toBe(memoId);
  });

  it('is served by MongoDB and Qdrant, not the embedded stores', async () => {
    const ready = await api<{ ready: boolean; services: Record<string, { details?: Record<string, unknown> } | null> }>('GET', '/readyz');
    expect(ready.body.ready).toBe(true);
    expect(JSON.stringify(ready.body.services.memo?.details)).toMatch(/mongo/i);
    expect(JSON.stringify(ready.body.services.indexer?.details)).toMatch(/qdrant/i);
  });
});
