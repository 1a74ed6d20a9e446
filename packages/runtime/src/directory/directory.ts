import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets, type Filter, type Scope } from '@memex/contracts';
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
  /** 256-bit secret (base64url) that signs the project's access tokens; replaced on key rotation. */
  tokenSecret?: string;
}

/** A key without `scopes` is an owner key: every scope, the whole project. */
export interface ApiKeyRecord {
  projectId: string;
  organizationId: string;
  createdAt: string;
  name?: string;
  scopes?: Scope[];
  filters?: Filter[];
  expiresAt?: string | null;
}

/** A key as listed: its id (the start of its hash, the CLI's fingerprint) and record; never the secret. */
export interface KeyListing {
  keyId: string;
  record: ApiKeyRecord;
  lastUsedAt: string | null;
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
/** Keys in the organizations bucket that claim a project name: `project-name.<organization id>.<sha256 of the name>`. */
const PROJECT_NAME_PREFIX = 'project-name.';

/** Keys and tokens are 256-bit random secrets, so an unsalted SHA-256 is a safe lookup key. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A key's public id: the start of its hash (what `key list` has always shown as the fingerprint). */
export function keyIdOf(hash: string): string {
  return hash.slice(0, 16);
}

function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

function newTokenSecret(): string {
  return randomBytes(32).toString('base64url');
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
    readonly keyUsage: KV,
  ) {}

  static async open(nc: NatsConnection, { replicas = 1 }: { replicas?: number } = {}): Promise<Directory> {
    const kvm = new Kvm(nc);
    const open = (name: string) => kvm.create(name, { history: 1, replicas });
    return new Directory(
      await open(Buckets.organizations),
      await open(Buckets.projects),
      await open(Buckets.apiKeys),
      await open(Buckets.orgTokens),
      await open(Buckets.keyUsage),
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
      if (key.startsWith(PROJECT_NAME_PREFIX)) continue;
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

  /** Projects, oldest first; of one organization when named. */
  async listProjects(organizationId?: string): Promise<ProjectRecord[]> {
    const out: ProjectRecord[] = [];
    for await (const key of await this.projects.keys()) {
      const project = await this.getProject(key);
      if (project && (!organizationId || project.organizationId === organizationId)) out.push(project);
    }
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** A project's live API keys: a fingerprint (the start of the key's hash) and when it was made; never the key. */
  async listKeys(projectId: string): Promise<{ fingerprint: string; createdAt: string }[]> {
    const project = await this.getProject(projectId);
    if (!project) throw new DirectoryError(`No project ${projectId}`);
    const out: { fingerprint: string; createdAt: string }[] = [];
    for (const hash of project.keyHashes) {
      const record = await this.read<ApiKeyRecord>(this.apiKeys, hash);
      if (record) out.push({ fingerprint: hash.slice(0, 16), createdAt: record.createdAt });
    }
    return out;
  }

  /**
   * Project names are unique within an organization: a name is claimed with a create-if-absent key,
   * so two CLIs racing on one name make one project; the other gets a `DirectoryError`.
   */
  async createProject(name: string, organizationId?: string): Promise<{ project: ProjectRecord; apiKey: string }> {
    const org = organizationId ? await this.getOrganization(organizationId) : await this.defaultOrganization();
    if (!org) throw new DirectoryError(`No organization ${organizationId}`);
    const project: ProjectRecord = { id: randomUUID(), organizationId: org.id, name, createdAt: new Date().toISOString(), keyHashes: [], tokenSecret: newTokenSecret() };
    const taken = () => new DirectoryError(`a project named "${name}" already exists in organization ${org.id} (${org.name})`);
    // Projects made before names were claimed are found by a scan.
    if ((await this.listProjects(org.id)).some((p) => p.name === name)) throw taken();
    const claim = `${PROJECT_NAME_PREFIX}${org.id}.${hashSecret(name)}`;
    try {
      await this.organizations.create(claim, encodeJson({ projectId: project.id }));
    } catch (error) {
      if (await this.read(this.organizations, claim)) throw taken();
      throw error;
    }
    const { apiKey, hash } = await this.storeKey(project);
    await this.projects.create(project.id, encodeJson({ ...project, keyHashes: [hash] }));
    return { project: { ...project, keyHashes: [hash] }, apiKey };
  }

  private async storeKey(
    project: Pick<ProjectRecord, 'id' | 'organizationId'>,
    scoped: Pick<ApiKeyRecord, 'name' | 'scopes' | 'filters' | 'expiresAt'> = {},
  ): Promise<{ apiKey: string; hash: string; record: ApiKeyRecord }> {
    const apiKey = newSecret(API_KEY_PREFIX);
    const hash = hashSecret(apiKey);
    const record: ApiKeyRecord = { projectId: project.id, organizationId: project.organizationId, createdAt: new Date().toISOString(), ...scoped };
    await this.apiKeys.put(hash, encodeJson(record));
    return { apiKey, hash, record };
  }

  /** A scoped key: only `scopes`, only inside `filters`, until `expiresAt`. The secret is returned once. */
  async createKey(
    projectId: string,
    input: { name: string; scopes: Scope[]; filters: Filter[]; expiresAt: string | null },
  ): Promise<{ keyId: string; apiKey: string; record: ApiKeyRecord }> {
    const project = await this.getProject(projectId);
    if (!project) throw new DirectoryError(`No project ${projectId}`);
    const { apiKey, hash, record } = await this.storeKey(project, input);
    try {
      await this.updateProject(projectId, (p) => ({ ...p, keyHashes: [...p.keyHashes, hash] }));
    } catch (error) {
      await this.apiKeys.delete(hash);
      throw error;
    }
    return { keyId: keyIdOf(hash), apiKey, record };
  }

  /** Every live key of the project, owner keys included, oldest first. */
  async projectKeys(projectId: string): Promise<KeyListing[]> {
    const project = await this.getProject(projectId);
    if (!project) throw new DirectoryError(`No project ${projectId}`);
    const out: KeyListing[] = [];
    for (const hash of project.keyHashes) {
      const record = await this.read<ApiKeyRecord>(this.apiKeys, hash);
      if (!record) continue;
      const usage = await this.read<{ lastUsedAt: string }>(this.keyUsage, keyIdOf(hash));
      out.push({ keyId: keyIdOf(hash), record, lastUsedAt: usage?.lastUsedAt ?? null });
    }
    return out.sort((a, b) => a.record.createdAt.localeCompare(b.record.createdAt));
  }

  /** Revokes one key by id; false when the project has no such key. Its tokens die with it. */
  async deleteKey(projectId: string, keyId: string): Promise<boolean> {
    let removed: string | undefined;
    await this.updateProject(projectId, (p) => {
      removed = p.keyHashes.find((h) => keyIdOf(h) === keyId);
      return removed ? { ...p, keyHashes: p.keyHashes.filter((h) => h !== removed) } : p;
    });
    if (!removed) return false;
    await this.apiKeys.delete(removed);
    await this.keyUsage.delete(keyId).catch(() => undefined);
    return true;
  }

  /** The project's token-signing secret, made on first use for projects older than tokens. */
  async tokenSecret(projectId: string): Promise<string> {
    const project = await this.getProject(projectId);
    if (!project) throw new DirectoryError(`No project ${projectId}`);
    if (project.tokenSecret) return project.tokenSecret;
    const { after } = await this.updateProject(projectId, (p) => (p.tokenSecret ? p : { ...p, tokenSecret: newTokenSecret() }));
    return after.tokenSecret!;
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

  /**
   * Issues a new owner key and revokes every older key (scoped ones included); the token-signing
   * secret is replaced too, so every token minted so far stops working.
   */
  async rotateKey(projectId: string): Promise<string> {
    const project = await this.getProject(projectId);
    if (!project) throw new DirectoryError(`No project ${projectId}`);
    const { apiKey, hash } = await this.storeKey(project);
    const { before } = await this.updateProject(projectId, (p) => ({ ...p, keyHashes: [hash], tokenSecret: newTokenSecret() }));
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
