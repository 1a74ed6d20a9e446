import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { Subjects } from '@memex/contracts';
import { decodeJson, encodeJson } from '@memex/runtime';

interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the oldest counted request stops counting (a slot frees up). */
  resetMs: number;
}

interface WindowCounts {
  local: number;
  /** Latest count each other gateway instance reported for this window. */
  remote: Map<string, number>;
}

interface SyncMessage {
  instance: string;
  /** [slice, key, this instance's count in that slice] */
  counts: [number, string, number][];
}

interface RateLimiterOptions {
  /** Requests per key per window; 0 disables the limiter. */
  limit: number;
  windowMs: number;
  instance: string;
  clock?: () => number;
  /** How often this instance tells the others its counts. */
  syncIntervalMs?: number;
  /** Slices per window (default 10); a request counts until its whole slice is a window old. */
  slices?: number;
  /** Where the instances of this limiter share their counts (one subject per limiter). */
  subject?: string;
}

/**
 * A per-project sliding-window rate limit shared by every gateway instance. The window is cut into
 * `slices` slices; a decision counts every request in the slices that overlap the last `windowMs`, so
 * no span of `windowMs` ever lets more than `limit` requests through (a burst at a window boundary
 * cannot double the quota). The price: a request keeps counting up to one slice (windowMs/slices)
 * longer than a window. Each instance counts its own requests and broadcasts its per-slice counts
 * over core NATS every `syncIntervalMs`; a decision adds the other instances' latest counts. Across
 * instances the count lags by at most one sync interval.
 */
export class RateLimiter {
  private readonly windows = new Map<number, Map<string, WindowCounts>>();
  /** Slices and keys counted since the last broadcast. */
  private readonly dirty = new Map<number, Set<string>>();
  private readonly clock: () => number;
  private readonly slices: number;
  private readonly sliceMs: number;
  private sub: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RateLimiterOptions) {
    this.clock = options.clock ?? Date.now;
    this.slices = Math.max(1, options.slices ?? 10);
    this.sliceMs = options.windowMs / this.slices;
  }

  get enabled(): boolean {
    return this.options.limit > 0;
  }

  /** Requests (memos, for a batch) per key per window. */
  get limit(): number {
    return this.options.limit;
  }

  private counts(window: number, key: string): WindowCounts {
    let byKey = this.windows.get(window);
    if (!byKey) {
      byKey = new Map();
      this.windows.set(window, byKey);
      for (const w of this.windows.keys()) if (w < window - this.slices) this.windows.delete(w);
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

  /** Counts one request for `key` if it is within the limit; `cost` counts it as that many (a batch of memos), all or none. */
  take(key: string, cost = 1): RateLimitDecision {
    return this.decide(key, true, cost);
  }

  /** Whether one more request for `key` would be within the limit, without counting it. */
  peek(key: string): RateLimitDecision {
    return this.decide(key, false);
  }

  private decide(key: string, record: boolean, cost = 1): RateLimitDecision {
    const { limit } = this.options;
    const now = this.clock();
    const slice = Math.floor(now / this.sliceMs);
    let count = 0;
    let oldest: number | undefined;
    for (let s = slice - this.slices; s <= slice; s++) {
      const n = this.total(s, key);
      if (n > 0 && oldest === undefined) oldest = s;
      count += n;
    }
    const resetMs = Math.max(1, Math.ceil(((oldest ?? slice) + this.slices + 1) * this.sliceMs - now));
    if (limit <= 0) return { allowed: true, limit, remaining: Number.POSITIVE_INFINITY, resetMs };
    if (count + cost > limit) {
      return { allowed: false, limit, remaining: 0, resetMs };
    }
    if (!record) return { allowed: true, limit, remaining: Math.max(0, limit - count), resetMs };
    this.counts(slice, key).local += cost;
    let dirtyKeys = this.dirty.get(slice);
    if (!dirtyKeys) this.dirty.set(slice, (dirtyKeys = new Set()));
    dirtyKeys.add(key);
    return { allowed: true, limit, remaining: Math.max(0, limit - count - cost), resetMs };
  }

  /** Joins the other gateway instances' counting. */
  start(nc: NatsConnection): void {
    if (!this.enabled) return;
    const { instance, syncIntervalMs = 100, subject = Subjects.rateLimitSync } = this.options;
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const sync = decodeJson<SyncMessage>(msg.data);
        if (sync.instance === instance) return;
        for (const [slice, key, n] of sync.counts) this.counts(slice, key).remote.set(sync.instance, n);
      },
    });
    this.timer = setInterval(() => {
      if (this.dirty.size === 0) return;
      const counts: SyncMessage['counts'] = [];
      for (const [slice, keys] of this.dirty) {
        for (const key of keys) counts.push([slice, key, this.windows.get(slice)?.get(key)?.local ?? 0]);
      }
      this.dirty.clear();
      nc.publish(subject, encodeJson({ instance, counts } satisfies SyncMessage));
    }, syncIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.sub?.unsubscribe();
  }
}
