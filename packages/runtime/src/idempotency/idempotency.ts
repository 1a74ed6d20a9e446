import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets } from '@memex/contracts';

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 of a request body in canonical JSON. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/**
 * Which request body each Idempotency-Key was first used with, shared by every gateway through a NATS
 * KV bucket whose entries expire after `ttlMs`. Keys are the caller's scoped id for the (project, key)
 * pair, e.g. the memo id the key maps to.
 */
export class IdempotencyStore {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, { replicas = 1, ttlMs }: { replicas?: number; ttlMs: number }): Promise<IdempotencyStore> {
    return new IdempotencyStore(await new Kvm(nc).create(Buckets.idempotency, { history: 1, replicas, ttl: ttlMs }));
  }

  /**
   * Records `hash` for `id` unless one is recorded already. True when the request may go on (first
   * use, or the same body again); false when the key was used with a different body.
   */
  async claim(id: string, hash: string): Promise<boolean> {
    try {
      await this.kv.create(id, hash);
      return true;
    } catch (error) {
      const existing = await this.kv.get(id);
      if (!existing || existing.operation !== 'PUT') {
        // Expired or deleted between our create and get: try once more.
        await this.kv.put(id, hash);
        return true;
      }
      if (existing.string() === hash) return true;
      if (existing.length === 0) throw error;
      return false;
    }
  }
}
