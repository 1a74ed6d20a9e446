/**
 * `memex key create|delete` and `memex audit` over HTTPS through @memex/client, with the REST API's
 * field names as flags (`--scopes`, `--filters`, `--expires_at`, `--key_id`, `--memo_id`, …), as
 * the key's (or, with an organization token, --project's) project. `key list` stays in admin.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditQuery, CreateKeyBody, Filter, Scope } from '@memex/client';
import { cliClient } from './client';
import { options } from './options';

export async function runAccess(group: string, action: string, args: string[]): Promise<number> {
  const { values } = options(args, {
    key: { type: 'string' },
    insecure: { type: 'boolean', short: 'k' },
    project: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    filters: { type: 'string' },
    expires_at: { type: 'string' },
    key_id: { type: 'string' },
    memo_id: { type: 'string' },
    action: { type: 'string' },
    after: { type: 'string' },
    follow: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const env = values.project ? { ...process.env, MEMEX_PROJECT_ID: values.project } : process.env;
  const client = cliClient({ ...(values.key ? { key: values.key } : {}), ...(values.insecure ? { insecure: true } : {}) }, env);
  if (group === 'key' && action === 'create') {
    const body: CreateKeyBody = {
      name: values.name ?? '',
      scopes: (values.scopes ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '') as Scope[],
      ...(values.filters ? { filters: JSON.parse(values.filters) as Filter[] } : {}),
      ...(values.expires_at ? { expires_at: values.expires_at } : {}),
    };
    const key = await client.createKey(body);
    if (values.json) console.log(JSON.stringify(key));
    else console.log(`key ${key.key_id} (${key.name}): ${key.scopes.join(', ')}${key.filters.length ? `, space ${JSON.stringify(key.filters)}` : ''}\napi key (shown once): ${key.api_key}`);
    return 0;
  }
  if (group === 'key' && action === 'delete') {
    if (!values.key_id) throw new Error('--key_id is required');
    await client.deleteKey(values.key_id);
    console.log(values.json ? JSON.stringify({ key_id: values.key_id, deleted: true }) : `key ${values.key_id} revoked`);
    return 0;
  }
  // audit: one NDJSON line per entry, oldest first; --follow keeps polling for new ones.
  let after = values.after;
  for (;;) {
    const query: AuditQuery = {
      limit: 1000,
      ...(after ? { after } : {}),
      ...(values.key_id ? { key_id: values.key_id } : {}),
      ...(values.memo_id ? { memo_id: values.memo_id } : {}),
      ...(values.action ? { action: values.action } : {}),
    };
    const page = await client.listAudit(query);
    for (const entry of page.results) {
      console.log(values.json || values.follow ? JSON.stringify(entry) : `${entry.at}  ${entry.action}  ${entry.status}  ${entry.subject ?? entry.key_id ?? '-'}  ${entry.memo_ids.join(',')}`);
    }
    if (page.next) after = page.next;
    if (page.results.length === 1000) continue;
    if (!values.follow) return 0;
    await sleep(1000);
  }
}
