import { SCOPES } from '@memex/contracts';
import { Directory } from '@memex/runtime';
import { USAGE, options } from './options';
import { connectCli } from './nats';

function print(json: boolean, value: Record<string, unknown>, text: string): void {
  console.log(json ? JSON.stringify(value) : text);
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`--${flag} is required\n\n${USAGE}`);
  return value;
}

/** `org`, `project`, `key` and `token` commands: each opens the directory, acts, closes. */
export async function runAdmin(group: string, action: string, args: string[]): Promise<number> {
  const { values } = options(args, {
    name: { type: 'string' },
    org: { type: 'string' },
    project: { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean' },
  });
  const json = values.json === true;
  const nc = await connectCli();
  try {
    const directory = await Directory.open(nc, { replicas: Number(process.env.MEMEX_NATS_REPLICAS || 1) });
    switch (`${group} ${action}`) {
      case 'org create': {
        const org = await directory.createOrganization(required(values.name, 'name'));
        print(json, { organization_id: org.id, name: org.name }, `organization ${org.id} (${org.name})`);
        return 0;
      }
      case 'org list': {
        const orgs = await directory.listOrganizations();
        if (json) console.log(JSON.stringify(orgs.map((o) => ({ organization_id: o.id, name: o.name, created_at: o.createdAt }))));
        else for (const o of orgs) console.log(`${o.id}  ${o.name}`);
        return 0;
      }
      case 'project create': {
        const { project, apiKey } = await directory.createProject(required(values.name, 'name'), values.org);
        print(
          json,
          { organization_id: project.organizationId, project_id: project.id, api_key: apiKey },
          `project ${project.id} (${project.name}) in organization ${project.organizationId}\napi key (shown once): ${apiKey}`,
        );
        return 0;
      }
      case 'project list': {
        const projects = await directory.listProjects(values.org);
        if (json) {
          console.log(
            JSON.stringify(
              projects.map((p) => ({ project_id: p.id, name: p.name, organization_id: p.organizationId, created_at: p.createdAt, api_keys: p.keyHashes.length })),
            ),
          );
        } else for (const p of projects) console.log(`${p.id}  ${p.name}  (organization ${p.organizationId}, ${p.keyHashes.length} key(s))`);
        return 0;
      }
      case 'key list': {
        const projectId = required(values.project, 'project');
        // The HTTP API's field names (GET /api/v1/project/keys); `fingerprint` is the key id, kept for older scripts.
        const keys = await directory.projectKeys(projectId);
        const rows = keys.map(({ keyId, record, lastUsedAt }) => ({
          project_id: projectId,
          key_id: keyId,
          fingerprint: keyId,
          name: record.name ?? (record.scopes ? '' : 'owner'),
          scopes: record.scopes ?? [...SCOPES],
          filters: record.filters ?? [],
          expires_at: record.expiresAt ?? null,
          created_at: record.createdAt,
          last_used_at: lastUsedAt,
        }));
        if (json) console.log(JSON.stringify(rows));
        else for (const k of rows) console.log(`${k.key_id}  ${k.name}  ${k.scopes.join(',')}  created ${k.created_at}`);
        return 0;
      }
      case 'key rotate': {
        const projectId = required(values.project, 'project');
        const apiKey = await directory.rotateKey(projectId);
        print(json, { project_id: projectId, api_key: apiKey }, `new api key for ${projectId} (shown once): ${apiKey}\nolder keys are revoked`);
        return 0;
      }
      case 'key revoke': {
        const projectId = required(values.project, 'project');
        const n = await directory.revokeKeys(projectId);
        print(json, { project_id: projectId, revoked: n }, `revoked ${n} key(s) of ${projectId}`);
        return 0;
      }
      case 'token create': {
        const orgId = required(values.org, 'org');
        const token = await directory.createOrgToken(orgId);
        print(json, { organization_id: orgId, token }, `organization token (shown once): ${token}`);
        return 0;
      }
      case 'token revoke': {
        await directory.revokeOrgToken(required(values.token, 'token'));
        print(json, { revoked: true }, 'token revoked');
        return 0;
      }
      default:
        console.error(`unknown command: ${group} ${action}\n\n${USAGE}`);
        return 2;
    }
  } finally {
    await nc.close();
  }
}
