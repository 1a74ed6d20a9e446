import { describe, expect, it } from 'vitest';
import { mapInTurns, nextTurn, runInTurns } from './turns';

describe('mapInTurns', () => {
  it('maps in order, and lets the event loop run between slices of work', async () => {
    let ranBetween = -1;
    let mapped = 0;
    setImmediate(() => (ranBetween = mapped));
    const items = Array.from({ length: 6 }, (_, i) => i);
    const out = await mapInTurns(
      items,
      (n, i) => {
        const until = performance.now() + 2;
        while (performance.now() < until) {
          // 2 ms of work an item
        }
        mapped += 1;
        return `${n}:${i}`;
      },
      3,
    );
    expect(out).toEqual(['0:0', '1:1', '2:2', '3:3', '4:4', '5:5']);
    // The callback queued before the loop ran after its first slice (two items, or fewer on a
    // machine busy enough to stretch them), not after all six.
    expect(ranBetween).toBeGreaterThanOrEqual(1);
    expect(ranBetween).toBeLessThanOrEqual(2);
  });

  it('does the whole of a short loop in one turn', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    expect(await mapInTurns([1, 2, 3], (n) => n * 2, 1000)).toEqual([2, 4, 6]);
    expect(ran).toBe(false);
  });

  it('resumes one waiting loop per turn, so two loops in flight do not both run between two turns', async () => {
    const order: string[] = [];
    const loop = async (name: string) => {
      for (let i = 0; i < 3; i++) {
        order.push(`${name}${i}`);
        await nextTurn();
      }
    };
    let turns = 0;
    let counting = true;
    const count = () => {
      turns += 1;
      order.push('|');
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    await Promise.all([loop('a'), loop('b')]);
    counting = false;
    // Both start at once; from then on one goes on per turn, in the order they asked.
    expect(order.slice(0, 2)).toEqual(['a0', 'b0']);
    const steps = order.filter((s) => s !== '|');
    expect(steps).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2']);
    // No two steps without a turn between them, after the first two.
    const afterStart = order.slice(2).join('');
    expect(afterStart).not.toMatch(/[ab]\d[ab]\d/);
    expect(turns).toBeGreaterThanOrEqual(4);
  });
});

describe('runInTurns', () => {
  function* work(steps: number, msEach: number, done: { steps: number }): Generator<void, string, void> {
    for (let i = 0; i < steps; i++) {
      const until = performance.now() + msEach;
      while (performance.now() < until) {
        // a step's work
      }
      done.steps += 1;
      yield;
    }
    return `${steps} steps`;
  }

  it("returns the generator's result, letting the event loop run between slices of its steps", async () => {
    const done = { steps: 0 };
    let ranBetween = -1;
    setImmediate(() => (ranBetween = done.steps));
    expect(await runInTurns(work(6, 2, done), 3)).toBe('6 steps');
    // After the first slice (two steps, or fewer on a busy machine), not after all six.
    expect(ranBetween).toBeGreaterThanOrEqual(1);
    expect(ranBetween).toBeLessThanOrEqual(2);
  });

  it('runs a short generator in one turn', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    expect(await runInTurns(work(3, 0, { steps: 0 }), 1000)).toBe('3 steps');
    expect(ran).toBe(false);
  });
});
