import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets } from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface ProjectRecord {
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
  /** Hashes of the project's live API keys. */
  keyHashes: string[];
}

export interface ApiKeyRecord {
  projectId: string;
  organizationId: string;
  createdAt: string;
}

export interface OrgTokenRecord {
  organizationId: string;
  createdAt: string;
}

export const API_KEY_PREFIX = 'mxp_';
export const ORG_TOKEN_PREFIX = 'mxo_';
/** The organization `project create` uses when none is named, and its fixed id. */
export const DEFAULT_ORGANIZATION_NAME = 'default';
export const DEFAULT_ORGANIZATION_ID = '00000000-0000-4000-8000-000000000001';

/** Keys and tokens are 256-bit random secrets, so an unsalted SHA-256 is a safe lookup key. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export class DirectoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DirectoryError';
  }
}

/**
 * Organizations, projects, API keys and organization tokens, in NATS KV buckets. Secrets are shown
 * once, when made, and stored only as hashes.
 */
export class Directory {
  private constructor(
    readonly organizations: KV,
    readonly projects: KV,
    readonly apiKeys: KV,
    readonly orgTokens: KV,
  ) {}

  static async open(nc: NatsConnection, { replicas = 1 }: { replicas?: number } = {}): Promise<Directory> {
    const kvm = new Kvm(nc);
    const open = (name: string) => kvm.create(name, { history: 1, replicas });
    return new Directory(
      await open(Buckets.organizations),
      await open(Buckets.projects),
      await open(Buckets.apiKeys),
      await open(Buckets.orgTokens),
    );
  }

  private async read<T>(kv: KV, key: string): Promise<T | undefined> {
    const entry = await kv.get(key);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return undefined;
    return decodeJson<T>(entry.value);
  }

  async createOrganization(name: string): Promise<OrganizationRecord> {
    const org: OrganizationRecord = { id: randomUUID(), name, createdAt: new Date().toISOString() };
    await this.organizations.put(org.id, encodeJson(org));
    return org;
  }

  getOrganization(id: string): Promise<OrganizationRecord | undefined> {
    return this.read<OrganizationRecord>(this.organizations, id);
  }

  async listOrganizations(): Promise<OrganizationRecord[]> {
    const out: OrganizationRecord[] = [];
    for await (const key of await this.organizations.keys()) {
      const org = await this.getOrganization(key);
      if (org) out.push(org);
    }
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * The organization named `default`, made on first use. Its id is fixed, and it is created with a
   * create-if-absent, so two CLIs racing still make one.
   */
  async defaultOrganization(): Promise<OrganizationRecord> {
    const existing = await this.getOrganization(DEFAULT_ORGANIZATION_ID);
    if (existing) return existing;
    const org: OrganizationRecord = { id: DEFAULT_ORGANIZATION_ID, name: DEFAULT_ORGANIZATION_NAME, createdAt: new Date().toISOString() };
    try {
      await this.organizations.create(org.id, encodeJson(org));
      return org;
    } catch {
      const winner = await this.getOrganization(DEFAULT_ORGANIZATION_ID);
      if (!winner) throw new DirectoryError('could not create the default organization');
      return winner;
    }
  }

  getProject(id: string): Promise<ProjectRecord | undefined> {
    return this.read<ProjectRecord>(this.projects, id);
  }

  async createProject(name: string, organizationId?: string): Promise<{ project: ProjectRecord; apiKey: string }> {
    const org = organizationId ? await this.getOrganization(organizationId) : await this.defaultOrganization();
    if (!org) throw new DirectoryError(`No organization ${organizationId}`);
    const project: ProjectRecord = { id: randomUUID(), organizationId: org.id, name, createdAt: new Date().toISOString(), keyHashes: [] };
    const { apiKey, hash } = await this.storeKey(project);
    await this.projects.create(project.id, encodeJson({ ...project, keyHashes: [hash] }));
    return { project: { ...project, keyHashes: [hash] }, apiKey };
  }

  private async storeKey(project: Pick<ProjectRecord, 'id' | 'organizationId'>): Promise<{ apiKey: string; hash: string }> {
    const apiKey = newSecret(API_KEY_PREFIX);
    const hash = hashSecret(apiKey);
    const record: ApiKeyRecord = { projectId: project.id, organizationId: project.organizationId, createdAt: new Date().toISOString() };
    await this.apiKeys.put(hash, encodeJson(record));
    return { apiKey, hash };
  }

  /** Changes a project record with compare-and-set, so concurrent key changes never lose one. */
  private async updateProject(projectId: string, change: (project: ProjectRecord) => ProjectRecord): Promise<{ before: ProjectRecord; after: ProjectRecord }> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = await this.projects.get(projectId);
      if (!entry || entry.operation !== 'PUT' || entry.length === 0) throw new DirectoryError(`No project ${projectId}`);
      const before = decodeJson<ProjectRecord>(entry.value);
      const after = change(before);
      try {
        await this.projects.update(projectId, encodeJson(after), entry.revision);
        return { before, after };
      } catch {
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
      }
    }
    throw new DirectoryError(`project ${projectId} is being changed by someone else; try again`);
  }

  /** Issues a new key and revokes every older one. */
  async rotateKey(projectId: string): Promise<string> {
    const project = await this.getProject(projectId);
    if (!project) throw new DirectoryError(`No project ${projectId}`);
    const { apiKey, hash } = await this.storeKey(project);
    const { before } = await this.updateProject(projectId, (p) => ({ ...p, keyHashes: [hash] }));
    for (const old of before.keyHashes) if (old !== hash) await this.apiKeys.delete(old);
    return apiKey;
  }

  /** Revokes every key of the project; it keeps its data and can get a new key by rotation. */
  async revokeKeys(projectId: string): Promise<number> {
    const { before } = await this.updateProject(projectId, (p) => ({ ...p, keyHashes: [] }));
    for (const hash of before.keyHashes) await this.apiKeys.delete(hash);
    return before.keyHashes.length;
  }

  async createOrgToken(organizationId: string): Promise<string> {
    const org = await this.getOrganization(organizationId);
    if (!org) throw new DirectoryError(`No organization ${organizationId}`);
    const token = newSecret(ORG_TOKEN_PREFIX);
    const record: OrgTokenRecord = { organizationId, createdAt: new Date().toISOString() };
    await this.orgTokens.put(hashSecret(token), encodeJson(record));
    return token;
  }

  async revokeOrgToken(token: string): Promise<void> {
    await this.orgTokens.delete(hashSecret(token));
  }
}
