import type { KV } from '@nats-io/kv';
import { SCOPES, type Filter, type Scope } from '@memex/contracts';
import type { Logger } from '../logger';
import { decodeJson, encodeJson } from '../nats/codec';
import { hashSecret, keyIdOf, type ApiKeyRecord, type Directory, type OrgTokenRecord, type ProjectRecord } from './directory';
import { ACCESS_TOKEN_PREFIX, tokenClaims, verifyToken } from './tokens';

/**
 * Who is calling. A project principal carries its scopes and knowledge space (filters ANDed into
 * every retrieval and lookup); an owner key has every scope and the whole project. A token's
 * `keyId` is the key that minted it and `subject` whom it was minted for.
 */
export type Principal =
  | {
      kind: 'project';
      projectId: string;
      organizationId: string;
      keyId: string;
      owner: boolean;
      scopes: readonly Scope[];
      space: readonly Filter[];
      subject: string | null;
      /** Epoch ms after which the key or token no longer works; null: never. */
      expiresAt: number | null;
    }
  | { kind: 'organization'; organizationId: string };

/** Verified tokens remembered (so a busy token is not re-verified per request), at most this many. */
const VERIFIED_TOKENS_MAX = 10_000;
/** How often the keys seen in use are written to the usage bucket (`last_used_at`). */
const USAGE_FLUSH_MS = 30_000;

/**
 * The gateway's in-memory copy of keys, tokens and projects, kept current by KV watches: a revoked
 * key stops working as soon as the deletion reaches the watch (milliseconds), with no lookup per
 * request. Access tokens are verified by signature against the project's secret held here, and
 * refused once their minting key is gone.
 */
export class DirectoryCache {
  private readonly keys = new Map<string, ApiKeyRecord>();
  /** key id → key hash, of live keys. */
  private readonly keyIds = new Map<string, string>();
  private readonly tokens = new Map<string, OrgTokenRecord>();
  private readonly projects = new Map<string, ProjectRecord>();
  private readonly verified = new Map<string, { secret: string; principal: Principal & { kind: 'project' }; expiresAt: number }>();
  private readonly used = new Map<string, number>();
  private readonly stops: (() => void)[] = [];

  private constructor(private readonly logger: Logger) {}

  static async start(directory: Directory, logger: Logger): Promise<DirectoryCache> {
    const cache = new DirectoryCache(logger);
    await Promise.all([
      cache.follow(directory.apiKeys, cache.keys, (hash, record) => {
        if (record) cache.keyIds.set(keyIdOf(hash), hash);
        else cache.keyIds.delete(keyIdOf(hash));
      }),
      cache.follow(directory.orgTokens, cache.tokens),
      cache.follow(directory.projects, cache.projects),
    ]);
    const timer = setInterval(() => void cache.flushUsage(directory.keyUsage), USAGE_FLUSH_MS);
    timer.unref();
    cache.stops.push(() => clearInterval(timer));
    return cache;
  }

  private async follow<T>(kv: KV, into: Map<string, T>, onChange?: (key: string, value: T | undefined) => void): Promise<void> {
    const watch = await kv.watch();
    let resolveReady!: () => void;
    const ready = new Promise<void>((r) => (resolveReady = r));
    // With no keys yet, the watch sends nothing: treat "no pending initial values" as ready.
    const status = await kv.status();
    if (status.values === 0) resolveReady();
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation === 'PUT' && entry.length > 0) {
          const value = decodeJson<T>(entry.value);
          into.set(entry.key, value);
          onChange?.(entry.key, value);
        } else {
          into.delete(entry.key);
          onChange?.(entry.key, undefined);
        }
        if (entry.delta === 0) resolveReady();
      }
    })().catch((error: unknown) => this.logger.error({ err: error }, 'directory watch ended'));
    this.stops.push(() => watch.stop());
    await ready;
  }

  /** Who a bearer secret belongs to, or `undefined` for an unknown, revoked or expired one. */
  authenticate(secret: string, now = Date.now()): Principal | undefined {
    if (secret.startsWith(ACCESS_TOKEN_PREFIX)) return this.verifyAccessToken(secret, now);
    const hash = hashSecret(secret);
    const key = this.keys.get(hash);
    if (key) {
      if (key.expiresAt && Date.parse(key.expiresAt) <= now) return undefined;
      const keyId = keyIdOf(hash);
      this.used.set(keyId, now);
      const owner = key.scopes === undefined;
      return {
        kind: 'project',
        projectId: key.projectId,
        organizationId: key.organizationId,
        keyId,
        owner,
        scopes: key.scopes ?? SCOPES,
        space: key.filters ?? [],
        subject: null,
        expiresAt: key.expiresAt ? Date.parse(key.expiresAt) : null,
      };
    }
    const token = this.tokens.get(hash);
    if (token) return { kind: 'organization', organizationId: token.organizationId };
    return undefined;
  }

  /**
   * A token is good while its signature holds under the project's current secret, it has not
   * expired, and the key that minted it is live (and itself unexpired).
   */
  private verifyAccessToken(token: string, now: number): Principal | undefined {
    const remembered = this.verified.get(token);
    let principal: Principal & { kind: 'project' };
    if (remembered) {
      if (remembered.expiresAt <= now || this.projects.get(remembered.principal.projectId)?.tokenSecret !== remembered.secret) {
        this.verified.delete(token);
        return undefined;
      }
      principal = remembered.principal;
    } else {
      const unverified = tokenClaims(token);
      const project = unverified && this.projects.get(unverified.p);
      if (!project?.tokenSecret) return undefined;
      const claims = verifyToken(token, project.tokenSecret, now);
      if (!claims) return undefined;
      principal = {
        kind: 'project',
        projectId: project.id,
        organizationId: project.organizationId,
        keyId: claims.k,
        owner: false,
        scopes: claims.s,
        space: claims.f,
        subject: claims.sub ?? null,
        expiresAt: claims.e,
      };
      if (this.verified.size >= VERIFIED_TOKENS_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, { secret: project.tokenSecret, principal, expiresAt: claims.e });
    }
    const hash = this.keyIds.get(principal.keyId);
    const key = hash ? this.keys.get(hash) : undefined;
    if (!key || key.projectId !== principal.projectId) return undefined;
    if (key.expiresAt && Date.parse(key.expiresAt) <= now) return undefined;
    this.used.set(principal.keyId, now);
    return principal;
  }

  project(id: string): ProjectRecord | undefined {
    return this.projects.get(id);
  }

  /** Writes when keys were last seen in use; a lost write only makes `last_used_at` older. */
  async flushUsage(usage: KV): Promise<void> {
    const seen = [...this.used];
    this.used.clear();
    for (const [keyId, at] of seen) {
      if (!this.keyIds.has(keyId)) continue;
      await usage.put(keyId, encodeJson({ lastUsedAt: new Date(at).toISOString() })).catch((error: unknown) => this.logger.warn({ err: error }, 'could not record key use'));
    }
  }

  stop(): void {
    for (const stop of this.stops) stop();
  }
}
