import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Directory, DirectoryCache, connectNats, silentLogger } from '@memex/runtime';
import { eventually, startNatsServer, tempDir, type NatsServerHandle } from '@memex/testing';
import { REPO_ROOT } from '../support/paths';
import { runTs } from '../support/processes';

// Each CLI call is a Node process with tsx: seconds apiece on a busy machine.
describe('the memex CLI', { timeout: 400_000 }, () => {
  let nats: NatsServerHandle;
  const memex = (...args: string[]) => runTs('packages/cli/src/main.ts', args, { NATS_URL: nats.url });
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it('creates organizations, projects, keys and tokens; rotates and revokes keys', async () => {
    const org = await memex('org', 'create', '--name', 'acme', '--json');
    expect(org.code, org.stderr).toBe(0);
    const { organization_id: orgId } = JSON.parse(org.stdout) as { organization_id: string };

    const project = await memex('project', 'create', '--name', 'docs', '--org', orgId, '--json');
    expect(project.code, project.stderr).toBe(0);
    const created = JSON.parse(project.stdout.trim()) as { organization_id: string; project_id: string; api_key: string };
    expect(created).toEqual({ organization_id: orgId, project_id: expect.stringMatching(/^[0-9a-f-]{36}$/), api_key: expect.stringMatching(/^mxp_/) });

    const rotated = JSON.parse((await memex('key', 'rotate', '--project', created.project_id, '--json')).stdout) as { api_key: string };
    expect(rotated.api_key).not.toBe(created.api_key);
    const token = JSON.parse((await memex('token', 'create', '--org', orgId, '--json')).stdout) as { token: string };
    expect(token.token).toMatch(/^mxo_/);

    // What the gateway would see: the old key is gone, the new one and the token work.
    const nc = await connectNats({ url: nats.url, name: 'cli-test' });
    const cache = await DirectoryCache.start(await Directory.open(nc), silentLogger());
    try {
      expect(cache.authenticate(created.api_key)).toBeUndefined();
      expect(cache.authenticate(rotated.api_key)).toMatchObject({ kind: 'project', projectId: created.project_id, organizationId: orgId, owner: true, space: [] });
      expect(cache.authenticate(token.token)).toEqual({ kind: 'organization', organizationId: orgId });
      expect((await memex('key', 'revoke', '--project', created.project_id)).code).toBe(0);
      await eventually(() => cache.authenticate(rotated.api_key) === undefined, 5_000);
      expect((await memex('token', 'revoke', '--token', token.token)).code).toBe(0);
      await eventually(() => cache.authenticate(token.token) === undefined, 5_000);
    } finally {
      cache.stop();
      await nc.close();
    }

    const listed = JSON.parse((await memex('org', 'list', '--json')).stdout) as { organization_id: string; name: string }[];
    expect(listed.map((o) => o.name)).toContain('acme');
  });

  it('puts projects without --org into one default organization, even when created at once', async () => {
    const results = await Promise.all(['a', 'b', 'c'].map((name) => memex('project', 'create', '--name', name, '--json')));
    const orgs = new Set(results.map((r) => (JSON.parse(r.stdout) as { organization_id: string }).organization_id));
    expect(orgs.size).toBe(1);
    const listed = JSON.parse((await memex('org', 'list', '--json')).stdout) as { name: string }[];
    expect(listed.filter((o) => o.name === 'default')).toHaveLength(1);
  });

  it('fails clearly on bad usage', async () => {
    const unknown = await memex('frobnicate', 'now');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command: frobnicate now/);
    const missing = await memex('project', 'create');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--name is required/);
    const noProject = await memex('key', 'rotate', '--project', 'nope');
    expect(noProject.code).toBe(1);
    expect(noProject.stderr).toMatch(/No project nope/);
    const noNats = await runTs('packages/cli/src/main.ts', ['org', 'list'], { NATS_URL: 'nats://127.0.0.1:1' });
    expect(noNats.code).toBe(1);
    expect(noNats.stderr).toMatch(/cannot reach NATS/);
  });

  it('lists projects and keys without showing a secret', async () => {
    const created = JSON.parse((await memex('project', 'create', '--name', 'listed', '--json')).stdout) as { project_id: string; api_key: string };
    const projects = await memex('project', 'list', '--json');
    expect(projects.code, projects.stderr).toBe(0);
    const listed = JSON.parse(projects.stdout) as { project_id: string; name: string; api_keys: number }[];
    expect(listed).toContainEqual(expect.objectContaining({ project_id: created.project_id, name: 'listed', api_keys: 1 }));
    const keys = JSON.parse((await memex('key', 'list', '--project', created.project_id, '--json')).stdout) as { fingerprint: string }[];
    expect(keys).toHaveLength(1);
    await memex('key', 'rotate', '--project', created.project_id, '--json');
    const rotated = JSON.parse((await memex('key', 'list', '--project', created.project_id, '--json')).stdout) as { fingerprint: string }[];
    expect(rotated).toHaveLength(1);
    expect(rotated[0]!.fingerprint).not.toBe(keys[0]!.fingerprint);
    const text = (await memex('project', 'list')).stdout + (await memex('key', 'list', '--project', created.project_id)).stdout;
    expect(text).toContain(created.project_id);
    expect(projects.stdout + text).not.toMatch(/mxp_/);
  });

  it('refuses a second project of the same name in an organization, even when both are made at once', async () => {
    expect((await memex('project', 'create', '--name', 'twice', '--json')).code).toBe(0);
    const again = await memex('project', 'create', '--name', 'twice', '--json');
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/a project named "twice" already exists in organization/);
    const racing = await Promise.all([1, 2, 3].map(() => memex('project', 'create', '--name', 'racing', '--json')));
    expect(racing.filter((r) => r.code === 0)).toHaveLength(1);
    const org = JSON.parse((await memex('org', 'create', '--name', 'other', '--json')).stdout) as { organization_id: string };
    expect((await memex('project', 'create', '--name', 'twice', '--org', org.organization_id, '--json')).code).toBe(0);
  });

  it('finds the NATS that `pnpm start` started for the data dir without NATS_URL', async () => {
    const dir = tempDir('memex-cli-');
    try {
      writeFileSync(join(dir.path, 'nats.url'), `${nats.url}\n`);
      const listed = await runTs('packages/cli/src/main.ts', ['org', 'list', '--json'], { NATS_URL: '', MEMEX_DATA_DIR: dir.path });
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as { name: string }[]).map((o) => o.name)).toContain('acme');
    } finally {
      dir.remove();
    }
  });

  it('prints pure JSON through pnpm as the README writes it, and the README writes it so', () => {
    const run = spawnSync('pnpm', ['-s', 'memex', 'org', 'list', '--json'], { cwd: REPO_ROOT, env: { ...process.env, NATS_URL: nats.url }, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(() => JSON.parse(run.stdout)).not.toThrow();
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/pnpm -s memex project create --name my-project --json/);
    expect(readme.match(/pnpm memex [^\n]*--json/g) ?? []).toEqual([]);
  });
});
