import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { Subjects } from '@memex/contracts';
import { decodeJson, encodeJson } from '@memex/runtime';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the current window ends. */
  resetMs: number;
}

interface WindowCounts {
  local: number;
  /** Latest count each other gateway instance reported for this window. */
  remote: Map<string, number>;
}

interface SyncMessage {
  instance: string;
  window: number;
  counts: Record<string, number>;
}

export interface RateLimiterOptions {
  /** Requests per key per window; 0 disables the limiter. */
  limit: number;
  windowMs: number;
  instance: string;
  clock?: () => number;
  /** How often this instance tells the others its counts. */
  syncIntervalMs?: number;
}

/**
 * A per-project sliding-window rate limit shared by every gateway instance. Each instance counts its
 * own requests and broadcasts its counts over core NATS every `syncIntervalMs`; a decision adds the
 * other instances' latest counts. The estimate weighs the previous window by how much of it still
 * overlaps the sliding window. Across instances the count lags by at most one sync interval.
 */
export class RateLimiter {
  private readonly windows = new Map<number, Map<string, WindowCounts>>();
  private readonly dirty = new Set<string>();
  private readonly clock: () => number;
  private sub: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RateLimiterOptions) {
    this.clock = options.clock ?? Date.now;
  }

  get enabled(): boolean {
    return this.options.limit > 0;
  }

  private counts(window: number, key: string): WindowCounts {
    let byKey = this.windows.get(window);
    if (!byKey) {
      byKey = new Map();
      this.windows.set(window, byKey);
      for (const w of this.windows.keys()) if (w < window - 1) this.windows.delete(w);
    }
    let c = byKey.get(key);
    if (!c) {
      c = { local: 0, remote: new Map() };
      byKey.set(key, c);
    }
    return c;
  }

  private total(window: number, key: string): number {
    const c = this.windows.get(window)?.get(key);
    if (!c) return 0;
    let sum = c.local;
    for (const n of c.remote.values()) sum += n;
    return sum;
  }

  /** Counts one request for `key` if it is within the limit. */
  take(key: string): RateLimitDecision {
    const { limit, windowMs } = this.options;
    const now = this.clock();
    const window = Math.floor(now / windowMs);
    const elapsed = (now - window * windowMs) / windowMs;
    const resetMs = (window + 1) * windowMs - now;
    if (limit <= 0) return { allowed: true, limit, remaining: Number.POSITIVE_INFINITY, resetMs };
    const estimate = this.total(window - 1, key) * (1 - elapsed) + this.total(window, key);
    if (estimate + 1 > limit) {
      return { allowed: false, limit, remaining: 0, resetMs };
    }
    this.counts(window, key).local += 1;
    this.dirty.add(key);
    return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - estimate - 1)), resetMs };
  }

  /** Joins the other gateway instances' counting. */
  start(nc: NatsConnection): void {
    if (!this.enabled) return;
    const { instance, syncIntervalMs = 100 } = this.options;
    this.sub = nc.subscribe(Subjects.rateLimitSync, {
      callback: (err, msg) => {
        if (err) return;
        const sync = decodeJson<SyncMessage>(msg.data);
        if (sync.instance === instance) return;
        for (const [key, n] of Object.entries(sync.counts)) this.counts(sync.window, key).remote.set(sync.instance, n);
      },
    });
    this.timer = setInterval(() => {
      if (this.dirty.size === 0) return;
      const window = Math.floor(this.clock() / this.options.windowMs);
      const counts: Record<string, number> = {};
      for (const key of this.dirty) counts[key] = this.windows.get(window)?.get(key)?.local ?? 0;
      this.dirty.clear();
      nc.publish(Subjects.rateLimitSync, encodeJson({ instance, window, counts } satisfies SyncMessage));
    }, syncIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.sub?.unsubscribe();
  }
}
