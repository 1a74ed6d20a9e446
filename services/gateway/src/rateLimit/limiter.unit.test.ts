import { describe, expect, it } from 'vitest';
import { RateLimiter } from './limiter';

describe('RateLimiter', () => {
  it('allows up to the limit in a window, then refuses, and recovers once the requests are a window old', () => {
    let now = 1_000_000 * 60_000; // the start of a window
    const limiter = new RateLimiter({ limit: 5, windowMs: 60_000, instance: 'a', clock: () => now });
    const decisions = Array.from({ length: 7 }, () => limiter.take('p1'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions[0]!.remaining).toBe(4);
    expect(decisions[4]!.remaining).toBe(0);
    expect(limiter.take('p2').allowed).toBe(true);

    // A window later the requests still count: they count until their whole slice (a tenth of the
    // window) is a window old.
    now += 60_000;
    expect(limiter.take('p1').allowed).toBe(false);
    now += 6_000;
    expect(Array.from({ length: 6 }, () => limiter.take('p1').allowed)).toEqual([true, true, true, true, true, false]);
  });

  it('counts a request of cost n as n requests, all or none', () => {
    const now = 1_000_000 * 60_000;
    const limiter = new RateLimiter({ limit: 10, windowMs: 60_000, instance: 'a', clock: () => now });
    expect(limiter.take('p1', 7)).toMatchObject({ allowed: true, remaining: 3 });
    expect(limiter.take('p1', 4)).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.take('p1', 3)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take('p1').allowed).toBe(false);
  });

  it('never lets more than the limit through in any span of one window, even across a window boundary', () => {
    const windowMs = 60_000;
    const limit = 10;
    let now = 1_000_000 * windowMs;
    const limiter = new RateLimiter({ limit, windowMs, instance: 'a', clock: () => now });
    const passed: number[] = [];
    // A burst at the very end of one window, then bursts through the next one: the fixed-window and
    // weighted-previous-window schemes let close to 2x the limit through within one window here.
    for (let t = windowMs - 100; t < 3 * windowMs; t += 250) {
      now = 1_000_000 * windowMs + t;
      for (let i = 0; i < limit; i++) if (limiter.take('p').allowed) passed.push(now);
    }
    expect(passed.length).toBeGreaterThan(limit); // it recovers
    for (const start of passed) {
      const inSpan = passed.filter((t) => t >= start && t < start + windowMs).length;
      expect(inSpan).toBeLessThanOrEqual(limit);
    }
  });

  it('tells when the oldest counted request stops counting', () => {
    const now = 60_000 * 10 + 15_000;
    const limiter = new RateLimiter({ limit: 1, windowMs: 60_000, instance: 'a', clock: () => now });
    limiter.take('p');
    // The request sits in the slice [612 s, 618 s); it counts until that slice is a window old: 678 s.
    expect(limiter.take('p')).toMatchObject({ allowed: false, resetMs: 63_000 });
  });

  it('is off with a limit of 0', () => {
    const limiter = new RateLimiter({ limit: 0, windowMs: 1000, instance: 'a' });
    for (let i = 0; i < 100; i++) expect(limiter.take('p').allowed).toBe(true);
  });
});
