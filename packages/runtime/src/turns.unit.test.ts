import { describe, expect, it } from 'vitest';
import { mapInTurns } from './turns';

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
});
