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
});
