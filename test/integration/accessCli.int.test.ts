import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '@memex/contracts';
import { listenHttps } from '../support/httpsListener';
import { runTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

/** `memex key create|list|delete` and `memex audit` against a gateway over HTTPS (issue 49). */
describe('the memex CLI for scoped keys and the audit trail', { timeout: 300_000 }, () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let owner: { projectId: string; key: string };
  const memex = (...args: string[]) =>
    runTs('packages/cli/src/main.ts', args, { NATS_URL: stack.nats.url, MEMEX_URL: https.url, MEMEX_API_KEY: owner.key, MEMEX_DATA_DIR: stack.dataDir });

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0' } });
    https = await listenHttps(stack.app, stack.dataDir);
    owner = await stack.project('cli-access');
  }, 120_000);
  afterAll(async () => {
    await https?.close();
    await stack?.stop();
  });

  it('creates, lists and deletes a scoped key, and prints the audit trail as NDJSON', async () => {
    const filters = JSON.stringify([{ field: 'user_id', operator: 'eq', value: 'u7', filter_type: 'custom_metadata' }]);
    const created = await memex('key', 'create', '--name', 'u7 app', '--scopes', 'search,memos:read', '--filters', filters, '--json');
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { key_id: string; api_key: string; scopes: string[]; filters: unknown[] };
    expect(key).toMatchObject({ scopes: ['search', 'memos:read'], filters: JSON.parse(filters), api_key: expect.stringMatching(/^mxp_/) });

    const listed = await memex('key', 'list', '--project', owner.projectId, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as { key_id: string; name: string; scopes: string[] }[];
    expect(rows.map((r) => [r.name, r.scopes.length])).toEqual([
      ['owner', SCOPES.length],
      ['u7 app', 2],
    ]);

    const bad = await memex('key', 'create', '--name', 'x', '--scopes', 'memos:purge');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('scopes: "memos:purge" is not one of');

    const deleted = await memex('key', 'delete', '--key_id', key.key_id);
    expect(deleted.code, deleted.stderr).toBe(0);

    const audit = await memex('audit', '--project', owner.projectId, '--json');
    expect(audit.code, audit.stderr).toBe(0);
    const entries = audit.stdout.trim().split('\n').map((line) => JSON.parse(line) as { action: string; status: number });
    expect(entries.map((e) => [e.action, e.status])).toEqual(expect.arrayContaining([['keys.create', 200], ['keys.create', 400], ['keys.delete', 204]]));
  });
});
