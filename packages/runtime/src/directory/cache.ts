import type { KV } from '@nats-io/kv';
import type { Logger } from '../logger';
import { decodeJson } from '../nats/codec';
import { hashSecret, type ApiKeyRecord, type Directory, type OrgTokenRecord, type ProjectRecord } from './directory';

export type Principal =
  | { kind: 'project'; projectId: string; organizationId: string }
  | { kind: 'organization'; organizationId: string };

/**
 * The gateway's in-memory copy of keys, tokens and projects, kept current by KV watches: a revoked
 * key stops working as soon as the deletion reaches the watch (milliseconds), with no lookup per
 * request.
 */
export class DirectoryCache {
  private readonly keys = new Map<string, ApiKeyRecord>();
  private readonly tokens = new Map<string, OrgTokenRecord>();
  private readonly projects = new Map<string, ProjectRecord>();
  private readonly stops: (() => void)[] = [];

  private constructor(private readonly logger: Logger) {}

  static async start(directory: Directory, logger: Logger): Promise<DirectoryCache> {
    const cache = new DirectoryCache(logger);
    await Promise.all([
      cache.follow(directory.apiKeys, cache.keys),
      cache.follow(directory.orgTokens, cache.tokens),
      cache.follow(directory.projects, cache.projects),
    ]);
    return cache;
  }

  private async follow<T>(kv: KV, into: Map<string, T>): Promise<void> {
    const watch = await kv.watch();
    let resolveReady!: () => void;
    const ready = new Promise<void>((r) => (resolveReady = r));
    // With no keys yet, the watch sends nothing: treat "no pending initial values" as ready.
    const status = await kv.status();
    if (status.values === 0) resolveReady();
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation === 'PUT' && entry.length > 0) into.set(entry.key, decodeJson<T>(entry.value));
        else into.delete(entry.key);
        if (entry.delta === 0) resolveReady();
      }
    })().catch((error: unknown) => this.logger.error({ err: error }, 'directory watch ended'));
    this.stops.push(() => watch.stop());
    await ready;
  }

  /** Who a bearer secret belongs to, or `undefined` for an unknown or revoked one. */
  authenticate(secret: string): Principal | undefined {
    const hash = hashSecret(secret);
    const key = this.keys.get(hash);
    if (key) return { kind: 'project', projectId: key.projectId, organizationId: key.organizationId };
    const token = this.tokens.get(hash);
    if (token) return { kind: 'organization', organizationId: token.organizationId };
    return undefined;
  }

  project(id: string): ProjectRecord | undefined {
    return this.projects.get(id);
  }

  stop(): void {
    for (const stop of this.stops) stop();
  }
}
