import { describe, expect, it } from 'vitest';
import { RateLimiter } from './limiter';

describe('RateLimiter', () => {
  it('allows up to the limit in a window, then refuses, and recovers as the window slides', () => {
    let now = 1_000_000 * 60_000; // the start of a window
    const limiter = new RateLimiter({ limit: 5, windowMs: 60_000, instance: 'a', clock: () => now });
    const decisions = Array.from({ length: 7 }, () => limiter.take('p1'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions[0]!.remaining).toBe(4);
    expect(decisions[4]!.remaining).toBe(0);
    expect(limiter.take('p2').allowed).toBe(true);

    // Half-way through the next window, half of the previous window still counts: 2.5 of 5.
    now += 90_000;
    expect([limiter.take('p1'), limiter.take('p1'), limiter.take('p1')].map((d) => d.allowed)).toEqual([true, true, false]);
    // A whole window later the old requests no longer count.
    now += 60_000;
    expect(limiter.take('p1').allowed).toBe(true);
  });

  it('reports the time to the end of the window', () => {
    const now = 60_000 * 10 + 15_000;
    const limiter = new RateLimiter({ limit: 1, windowMs: 60_000, instance: 'a', clock: () => now });
    expect(limiter.take('p').resetMs).toBe(45_000);
    expect(limiter.take('p')).toMatchObject({ allowed: false, resetMs: 45_000 });
  });

  it('is off with a limit of 0', () => {
    const limiter = new RateLimiter({ limit: 0, windowMs: 1000, instance: 'a' });
    for (let i = 0; i < 100; i++) expect(limiter.take('p').allowed).toBe(true);
  });
});
