import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '@memex/runtime';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { RateLimiter } from './limiter';

describe('rate limit shared by gateway instances over NATS', () => {
  let nats: NatsServerHandle;
  let a: NatsConnection;
  let b: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    a = await connectNats({ url: nats.url, name: 'gateway-a' });
    b = await connectNats({ url: nats.url, name: 'gateway-b' });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await nats?.stop();
  });

  it('counts both instances\' requests against one limit per project', async () => {
    const now = () => 1_000 * 60_000; // a fixed point in one window
    const first = new RateLimiter({ limit: 20, windowMs: 60_000, instance: 'a', clock: now, syncIntervalMs: 20 });
    const second = new RateLimiter({ limit: 20, windowMs: 60_000, instance: 'b', clock: now, syncIntervalMs: 20 });
    first.start(a);
    second.start(b);
    try {
      const allowed = (l: RateLimiter, n: number, project = 'p1') => Array.from({ length: n }, () => l.take(project)).filter((d) => d.allowed).length;
      expect(allowed(first, 12)).toBe(12);
      await new Promise((r) => setTimeout(r, 150));
      expect(allowed(second, 12)).toBe(8);
      await new Promise((r) => setTimeout(r, 150));
      expect(allowed(first, 5)).toBe(0);
      // Another project has its own budget.
      expect(allowed(second, 5, 'p2')).toBe(5);
    } finally {
      first.stop();
      second.stop();
    }
  });
});
