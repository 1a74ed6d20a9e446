import { describe, expect, it } from 'vitest';
import { MemexError } from '@memex/contracts';
import { WriteBudget } from './writeBudget';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('WriteBudget', () => {
  it('passes a step that ends in time through, and leaves the rest of the budget to the next', async () => {
    const budget = new WriteBudget(1_000);
    expect(await budget.step(after(10, 'ref'))).toBe('ref');
    const left = budget.left();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(1_000);
  });

  it('answers Timeout when a step outlasts the budget, and hands its late result to undo', async () => {
    const budget = new WriteBudget(30);
    const undone: string[] = [];
    const error = await budget.step(after(120, 'late-ref'), (late) => undone.push(late)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemexError);
    expect((error as MemexError).code).toBe('Timeout');
    expect(undone).toEqual([]);
    await after(150, undefined);
    expect(undone).toEqual(['late-ref']);
    expect(() => budget.left()).toThrow(MemexError);
  });

  it('lets a failing step fail with its own error, not a timeout', async () => {
    const budget = new WriteBudget(1_000);
    await expect(budget.step(Promise.reject(new Error('publish failed')))).rejects.toThrow('publish failed');
  });

  /** What @nats-io/jetstream throws while a stream has no leader. */
  const leaderless = () => Object.assign(new Error('jetstream is not enabled'), { name: 'JetStreamNotEnabled', cause: new Error("no responders: '$KV.x'") });

  it('tries a step again after a transient NATS failure (a stream without a leader) until it succeeds', async () => {
    const budget = new WriteBudget(5_000);
    let calls = 0;
    const result = await budget.retry(async () => {
      calls += 1;
      if (calls < 3) throw leaderless();
      return 'stored';
    });
    expect(result).toBe('stored');
    expect(calls).toBe(3);
  });

  it('does not try again after other failures, nor while NATS is disconnected', async () => {
    let calls = 0;
    const bug = new WriteBudget(5_000);
    await expect(bug.retry(async () => {
      calls += 1;
      throw new TypeError('a bug');
    })).rejects.toThrow('a bug');
    expect(calls).toBe(1);

    calls = 0;
    const offline = new WriteBudget(5_000, () => false);
    await expect(offline.retry(async () => {
      calls += 1;
      throw leaderless();
    })).rejects.toThrow('jetstream is not enabled');
    expect(calls).toBe(1);
  });

  it('gives up on a transient failure once the budget cannot hold another try', async () => {
    const budget = new WriteBudget(250);
    let calls = 0;
    await expect(budget.retry(async () => {
      calls += 1;
      throw leaderless();
    })).rejects.toThrow('jetstream is not enabled');
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThanOrEqual(3);
  });
});
