import { seededRandom } from '@memex/testing';
import { describe, expect, it } from 'vitest';
import { sparseTopK, type SparseScan, type SparseTerm } from './index';
import { KERNELS, withKernel } from './testKernels';

const BASE = 0.3;
const PER_LENGTH = 0.9 / 12;

/** A term over `slots` chunks: each holds it with probability `share`, 1-5 times; its bound is exact. */
function term(random: () => number, slots: number, share: number, weight: number, lengths: Float32Array): SparseTerm {
  const held: number[] = [];
  const tfs: number[] = [];
  for (let s = 0; s < slots; s++) {
    if (random() >= share) continue;
    held.push(s);
    tfs.push(1 + Math.floor(random() * 5));
  }
  let bound = 0;
  for (let j = 0; j < held.length; j++) bound = Math.max(bound, (weight * tfs[j]!) / (tfs[j]! + BASE + PER_LENGTH * lengths[held[j]!]!));
  // (spare room past n, as the index's postings have)
  const padded = new Int32Array(held.length + 3).fill(-1);
  padded.set(held);
  const paddedTfs = new Uint16Array(held.length + 3);
  paddedTfs.set(tfs);
  return { slots: padded, tfs: paddedTfs, n: held.length, weight, bound };
}

function scan(random: () => number, slots: number, terms: number, k: number): SparseScan {
  const lengths = Float32Array.from({ length: slots }, () => 1 + Math.floor(random() * 40));
  const mask = Uint8Array.from({ length: slots }, () => (random() < 0.8 ? 1 : 0));
  // Rare terms with high weights first, as the index orders them, and common ones with low weights.
  const list = Array.from({ length: terms }, (_, t) => term(random, slots, 0.01 + (0.6 * t) / terms, 6 / (1 + t), lengths));
  list.sort((a, b) => b.bound - a.bound);
  return { terms: list, lengths, mask, base: BASE, perLength: PER_LENGTH, k, sums: new Float64Array(slots), touched: new Int32Array(slots + 1) };
}

/** Every findable posting scored, summed in the terms' order: each slot's score. */
function scores(s: SparseScan): Map<number, number> {
  const sums = new Map<number, number>();
  for (const t of s.terms) {
    for (let j = 0; j < t.n; j++) {
      const slot = t.slots[j]!;
      if (s.mask[slot] !== 1) continue;
      const tf = t.tfs[j]!;
      sums.set(slot, (sums.get(slot) ?? 0) + (t.weight * tf) / (tf + s.base + s.perLength * s.lengths[slot]!));
    }
  }
  return sums;
}

/** The hits a sparse scan must return: every slot scoring at least the k-th best score. */
function reference(s: SparseScan): [number, number][] {
  const all = [...scores(s)].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const kth = all.length > s.k ? all[s.k - 1]![1] : Number.NEGATIVE_INFINITY;
  return all.filter(([, score]) => score >= kth);
}

function sorted(hits: { slots: number[]; scores: number[] }): [number, number][] {
  return hits.slots.map((slot, i): [number, number] => [slot, hits.scores[i]!]).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

// The kernel switch covers the sweep to the k-th best sum too (sparse.c): the plain sweep runs whole here, not only its tail.
describe.each(KERNELS)('sparseTopK (BM25 by MaxScore) with the %s kernel', (kernel) => {
  withKernel(kernel);

  it('returns what scoring every posting returns, to the last bit, and leaves its scratch zero', () => {
    const random = seededRandom(11);
    for (let trial = 0; trial < 60; trial++) {
      const s = scan(random, 200 + Math.floor(random() * 5_000), 1 + Math.floor(random() * 8), 1 + Math.floor(random() * 60));
      expect(sorted(sparseTopK(s)), `trial ${trial}`).toEqual(reference(s));
      expect(s.sums.every((x) => x === 0)).toBe(true);
    }
  });

  it('skips walking the long lists once their bounds cannot reach the top k, and still scores them for the survivors', () => {
    const random = seededRandom(12);
    const s = scan(random, 20_000, 6, 10);
    // The last term is in most chunks: MaxScore probes it for the few survivors instead of walking it.
    expect(s.terms.at(-1)!.n).toBeGreaterThan(10_000);
    const hits = sparseTopK(s);
    expect(sorted(hits)).toEqual(reference(s));
    expect(hits.slots.length).toBe(10);
  });

  it('returns every chunk tied with the k-th score, so the caller breaks ties', () => {
    const lengths = new Float32Array(10).fill(5);
    const same: SparseTerm = { slots: Int32Array.from([1, 3, 4, 7, 8]), tfs: Uint16Array.from([2, 2, 2, 2, 1]), n: 5, weight: 2, bound: 2 };
    const hits = sparseTopK({ terms: [same], lengths, mask: new Uint8Array(10).fill(1), base: BASE, perLength: PER_LENGTH, k: 2, sums: new Float64Array(10), touched: new Int32Array(11) });
    expect(hits.slots.sort((a, b) => a - b)).toEqual([1, 3, 4, 7]);
  });

  it('never finds a slot whose mask byte is not 1, or one past the per-slot arrays', () => {
    const lengths = new Float32Array(4).fill(3);
    const t: SparseTerm = { slots: Int32Array.from([0, 1, 2, 3, 9]), tfs: Uint16Array.from([1, 1, 1, 1, 9]), n: 5, weight: 1, bound: 1 };
    const hits = sparseTopK({ terms: [t], lengths, mask: Uint8Array.from([1, 0, 2, 1]), base: BASE, perLength: PER_LENGTH, k: 10, sums: new Float64Array(4), touched: new Int32Array(5) });
    expect(hits.slots.sort()).toEqual([0, 3]);
  });

  it('takes a k beyond the slots as all of them', () => {
    const random = seededRandom(14);
    const s = scan(random, 300, 3, 1);
    expect(sorted(sparseTopK({ ...s, k: 4_000_000_000 }))).toEqual(reference({ ...s, k: 300 }));
  });

  it('refuses arguments it cannot read safely with a TypeError or RangeError', () => {
    const random = seededRandom(13);
    const s = scan(random, 100, 2, 5);
    expect(() => sparseTopK({ ...s, terms: [{ ...s.terms[0]!, n: s.terms[0]!.slots.length + 1 }] })).toThrow(RangeError);
    expect(() => sparseTopK({ ...s, terms: [{ ...s.terms[0]!, tfs: new Uint16Array(0) }] })).toThrow(RangeError);
    expect(() => sparseTopK({ ...s, terms: [{ ...s.terms[0]!, weight: Number.NaN }] })).toThrow(RangeError);
    expect(() => sparseTopK({ ...s, terms: [{ ...s.terms[0]!, slots: new Float64Array(3) as unknown as Int32Array }] })).toThrow(TypeError);
    expect(() => sparseTopK({ ...s, terms: [{ ...s.terms[0]!, weight: -1 }] })).toThrow(RangeError);
    expect(() => sparseTopK({ ...s, base: -0.5 })).toThrow(RangeError);
    expect(() => sparseTopK({ ...s, k: 0 })).toThrow(RangeError);
    expect(() => sparseTopK({ ...s, lengths: new Float64Array(100) as unknown as Float32Array })).toThrow(TypeError);
    expect(() => sparseTopK({ ...s, touched: new Uint32Array(100) as unknown as Int32Array })).toThrow(TypeError);
  });

  it('stays within its scratch when postings repeat a chunk with a count of zero in every term', () => {
    const lengths = new Float32Array(3).fill(2);
    const zero: SparseTerm = { slots: Int32Array.from([0, 1, 2]), tfs: new Uint16Array(3), n: 3, weight: 1, bound: 1 };
    const touched = new Int32Array(4);
    const sums = new Float64Array(3);
    const hits = sparseTopK({ terms: Array.from({ length: 20 }, () => zero), lengths, mask: new Uint8Array(3).fill(1), base: BASE, perLength: PER_LENGTH, k: 2, sums, touched });
    expect(hits.scores.every((x) => x === 0)).toBe(true);
    expect(hits.slots.length).toBeLessThanOrEqual(3);
    expect(sums.every((x) => x === 0)).toBe(true);
  });
});
