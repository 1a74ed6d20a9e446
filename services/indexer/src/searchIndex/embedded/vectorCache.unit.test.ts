import { describe, expect, it } from 'vitest';
import { seededRandom } from '@memex/testing';
import type { FullVector } from './slots';
import { SlotVectorCache } from './vectorCache';

const DIM = 4;
/** A vector that names its slot (to tell which one a get returned): halves (8 bytes) or floats (16). */
const halves = (slot: number): FullVector => Uint16Array.from({ length: DIM }, () => slot);
const floats = (slot: number): FullVector => Float32Array.from({ length: DIM }, () => slot);

describe('SlotVectorCache', () => {
  it('gives back what was kept, by slot, and keeps no more bytes than its budget', () => {
    const cache = new SlotVectorCache(10 * 8, DIM); // ten halves
    for (let slot = 0; slot < 10; slot++) cache.set(slot, halves(slot));
    expect(cache.bytes).toBe(80);
    for (let slot = 0; slot < 10; slot++) expect(cache.get(slot)?.[0]).toBe(slot);
    cache.set(10, halves(10));
    expect(cache.bytes).toBe(80);
    expect(cache.get(10)?.[0]).toBe(10);
    expect([...Array(11).keys()].filter((slot) => cache.get(slot) === undefined)).toHaveLength(1);
    expect(cache.get(99)).toBeUndefined();
  });

  it('makes room with the vectors not used since the hand last passed them', () => {
    const cache = new SlotVectorCache(4 * 8, DIM);
    for (let slot = 0; slot < 4; slot++) cache.set(slot, halves(slot));
    cache.get(0);
    cache.get(2);
    cache.set(4, halves(4));
    cache.set(5, halves(5));
    // 1 and 3 were not used: they go; 0 and 2 stay
    expect([0, 1, 2, 3, 4, 5].map((slot) => cache.get(slot) !== undefined)).toEqual([true, false, true, false, true, true]);
  });

  it('counts floats at their size, and keeps nothing larger than its budget', () => {
    const cache = new SlotVectorCache(4 * 8, DIM);
    cache.set(0, floats(0));
    cache.set(1, floats(1));
    expect(cache.bytes).toBe(32);
    cache.set(2, halves(2));
    expect(cache.bytes).toBeLessThanOrEqual(32);
    expect(cache.get(2)?.[0]).toBe(2);
    const small = new SlotVectorCache(8, DIM);
    small.set(0, floats(0));
    expect(small.get(0)).toBeUndefined();
    expect(small.bytes).toBe(0);
  });

  it('forgets a deleted slot, and one set again holds its new vector once', () => {
    const cache = new SlotVectorCache(4 * 8, DIM);
    cache.set(1, halves(1));
    cache.set(2, halves(2));
    cache.delete(1);
    expect(cache.get(1)).toBeUndefined();
    expect(cache.bytes).toBe(8);
    cache.set(2, floats(2));
    expect(cache.get(2)).toBeInstanceOf(Float32Array);
    expect(cache.bytes).toBe(16);
  });

  it('follows slots renumbered by a compaction, a kept one landing on a dropped one\'s number', () => {
    const cache = new SlotVectorCache(10 * 8, DIM);
    for (const slot of [9, 2, 5]) cache.set(slot, halves(slot));
    // 5 is dropped, 9 becomes 5, 2 becomes 1 (whatever the order of the ring)
    const remap = Int32Array.from({ length: 10 }, (_, old) => (old === 9 ? 5 : old === 2 ? 1 : -1));
    cache.remap(remap);
    expect(cache.get(5)?.[0]).toBe(9);
    expect(cache.get(1)?.[0]).toBe(2);
    expect(cache.get(2)).toBeUndefined();
    expect(cache.get(9)).toBeUndefined();
    expect(cache.bytes).toBe(16);
  });

  it('after any sequence of sets, gets, deletes and remaps, gives back only what was set for a slot, within its budget', () => {
    const random = seededRandom(21);
    const budget = 24 * 8;
    const cache = new SlotVectorCache(budget, DIM);
    // What each slot was last given (its current number), and a tag telling vectors apart.
    const given = new Map<number, FullVector>();
    let tag = 0;
    for (let step = 0; step < 20_000; step++) {
      const slot = Math.floor(random() * 200);
      const op = random();
      if (op < 0.45) {
        const v = random() < 0.7 ? halves(tag++) : floats(tag++);
        cache.set(slot, v);
        given.set(slot, v);
      } else if (op < 0.9) {
        const got = cache.get(slot);
        if (got !== undefined) expect(got).toBe(given.get(slot));
      } else if (op < 0.99) {
        cache.delete(slot);
        given.delete(slot);
        expect(cache.get(slot)).toBeUndefined();
      } else {
        // a compaction: a random half of the slots dropped, the others numbered down in order
        const remap = new Int32Array(200).fill(-1);
        let next = 0;
        for (let old = 0; old < 200; old++) if (random() < 0.5) remap[old] = next++;
        const keptBefore = [...given.keys()].filter((old) => cache.get(old) !== undefined);
        cache.remap(remap);
        const moved = new Map<number, FullVector>();
        for (const [old, v] of given) if (remap[old]! >= 0) moved.set(remap[old]!, v);
        given.clear();
        for (const [slot, v] of moved) given.set(slot, v);
        // (a compaction loses none of the vectors kept for slots that stay)
        for (const old of keptBefore) if (remap[old]! >= 0) expect(cache.get(remap[old]!)).toBe(given.get(remap[old]!));
      }
      expect(cache.bytes).toBeLessThanOrEqual(budget);
    }
    // The bytes counted are those of the vectors it gives back.
    let kept = 0;
    for (let slot = 0; slot < 200; slot++) {
      const got = cache.get(slot);
      if (got === undefined) continue;
      expect(got).toBe(given.get(slot));
      kept += got.byteLength;
    }
    expect(cache.bytes).toBe(kept);
  });
});
