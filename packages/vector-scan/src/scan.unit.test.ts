import { seededRandom } from '@memex/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { estimateRows, exactProducts, scanTopK, useVectorScanKernel, vectorScanKernel, type RowEstimates, type VectorScan } from './index';
import { CHOSEN_KERNEL, KERNELS, withKernel } from './testKernels';

function codes(random: () => number, n: number): Int8Array {
  const out = new Int8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(random() * 256) - 128;
  return out;
}

/** The same ranking computed plainly: every row scored, sorted by score, then slot. */
function reference(s: VectorScan): number[] {
  const scored: { slot: number; score: number }[] = [];
  for (const slot of s.slots ?? Array.from({ length: s.total }, (_, i) => i)) {
    let dot = 0;
    let norm = 0;
    for (let d = 0; d < s.dimension; d++) {
      const x = s.codes[slot * s.dimension + d]!;
      dot += s.query[d]! * x;
      norm += x * x;
    }
    scored.push({ slot, score: s.cosine ? (norm > 0 ? dot / Math.sqrt(norm) : 0) : dot });
  }
  scored.sort((a, b) => b.score - a.score || a.slot - b.slot);
  return scored.slice(0, s.k).map((e) => e.slot);
}

describe.each(KERNELS)('scanTopK with the %s kernel', (kernel) => {
  withKernel(kernel);

  it.each([1, 7, 15, 16, 17, 31, 100, 384])('ranks like a plain loop at %i dimensions, by inner product and by cosine', (dimension) => {
    const random = seededRandom(dimension);
    const total = 3_000;
    const block = codes(random, total * dimension);
    for (const cosine of [false, true]) {
      for (let q = 0; q < 5; q++) {
        const s: VectorScan = { codes: block, total, dimension, query: codes(random, dimension), k: 50, cosine };
        expect(Array.from(scanTopK(s))).toEqual(reference(s));
      }
    }
  });

  it.each([32, 33, 63, 64, 100, 384])('ranks like a plain loop at %i dimensions with queries as quantize makes them (no -128), rows of any bytes, in full and through a list, ties and products a step apart included', (dimension) => {
    const random = seededRandom(1_000 + dimension);
    // (a total and a list that are not multiples of four: the kernel takes four rows at a time)
    const total = 2_003;
    const block = codes(random, total * dimension);
    // rows at the extremes: products of ±128 and ±127 in every pair a byte multiply sums
    for (const slot of [0, 5, 2_002]) block.fill(slot === 5 ? 127 : -128, slot * dimension, (slot + 1) * dimension);
    const listed = Uint32Array.from({ length: 667 }, (_, i) => 3 * i);
    for (let q = 0; q < 6; q++) {
      const query = Int8Array.from(codes(random, dimension), (x) => Math.max(-127, x));
      if (q === 0) query.fill(-127);
      if (q === 1) query.fill(127);
      for (const slots of [undefined, listed]) {
        const s: VectorScan = { codes: block, total, dimension, query, k: 40, ...(slots ? { slots } : {}) };
        expect(Array.from(scanTopK(s))).toEqual(reference(s));
      }
    }
    // Products a step apart and tied by the hundred: rows of zeros but their first byte, in -5..5, and
    // a query of ones. The threshold rises by single steps, and a row one above it must still get in.
    const steps = new Int8Array(total * dimension);
    for (let slot = 0; slot < total; slot++) steps[slot * dimension] = Math.floor(random() * 11) - 5;
    const ones = new Int8Array(dimension).fill(1);
    for (const k of [1, 10, 232, 1_500]) {
      for (const slots of [undefined, listed]) {
        const s: VectorScan = { codes: steps, total, dimension, query: ones, k, ...(slots ? { slots } : {}) };
        expect(Array.from(scanTopK(s))).toEqual(reference(s));
      }
    }
  });

  it('ranks equal scores by slot, so duplicated rows come back in slot order', () => {
    const dimension = 20;
    const row = codes(seededRandom(3), dimension);
    const total = 40;
    const block = new Int8Array(total * dimension);
    for (let slot = 0; slot < total; slot++) block.set(row, slot * dimension);
    const slots = scanTopK({ codes: block, total, dimension, query: row, k: 10 });
    expect(Array.from(slots)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('keeps the best k through many rounds of selection: rising scores, long runs of ties, k up to most of the rows', () => {
    const dimension = 8;
    const total = 20_000;
    const random = seededRandom(11);
    const query = codes(random, dimension);
    // Scores that rise along the scan (every row is kept, then selected out again), with ties where rounding meets.
    const rising = new Int8Array(total * dimension);
    for (let slot = 0; slot < total; slot++) {
      for (let d = 0; d < dimension; d++) rising[slot * dimension + d] = Math.round((query[d]! * slot) / total);
    }
    // Twenty distinct rows repeated in a random order: every score ties with ~250 others.
    const distinct = codes(random, 20 * dimension);
    const repeated = new Int8Array(total * dimension);
    for (let slot = 0; slot < total; slot++) {
      const pick = Math.floor(random() * 20);
      repeated.set(distinct.subarray(pick * dimension, (pick + 1) * dimension), slot * dimension);
    }
    for (const block of [rising, repeated]) {
      for (const k of [1, 10, 232, 4_000]) {
        for (const cosine of [false, true]) {
          const s: VectorScan = { codes: block, total, dimension, query, k, cosine };
          expect(Array.from(scanTopK(s))).toEqual(reference(s));
        }
      }
    }
    // Random rows and queries: the threshold rises in several steps as better rows turn up.
    const shuffled = codes(random, total * dimension);
    for (let q = 0; q < 40; q++) {
      for (const k of [10, 232]) {
        const s: VectorScan = { codes: shuffled, total, dimension, query: codes(random, dimension), k };
        expect(Array.from(scanTopK(s))).toEqual(reference(s));
      }
    }
  });

  it('returns the same k rows in no particular order when unordered, ties included', () => {
    const random = seededRandom(23);
    const dimension = 16;
    const total = 5_000;
    // ten distinct rows repeated: the k-th place ties with hundreds of rows
    const distinct = codes(random, 10 * dimension);
    const block = new Int8Array(total * dimension);
    for (let slot = 0; slot < total; slot++) {
      const pick = Math.floor(random() * 10);
      block.set(distinct.subarray(pick * dimension, (pick + 1) * dimension), slot * dimension);
    }
    const shuffled = codes(random, total * dimension);
    for (const rows of [block, shuffled]) {
      for (const k of [1, 10, 256, 1_200]) {
        const s: VectorScan = { codes: rows, total, dimension, query: codes(random, dimension), k };
        const unordered = Array.from(scanTopK({ ...s, unordered: true }));
        expect(unordered).toHaveLength(k);
        expect(unordered.sort((a, b) => a - b)).toEqual(reference(s).sort((a, b) => a - b));
      }
    }
  });

  it('scans only the listed slots when given a list, and only the first total rows', () => {
    const random = seededRandom(11);
    const dimension = 100;
    const block = codes(random, 1_000 * dimension);
    const listed = Uint32Array.from({ length: 267 }, (_, i) => 3 * i);
    const s: VectorScan = { codes: block, total: 800, dimension, query: codes(random, dimension), k: 40, slots: listed.filter((slot) => slot < 800) };
    const found = Array.from(scanTopK(s));
    expect(found).toEqual(reference(s));
    expect(found.every((slot) => slot % 3 === 0 && slot < 800)).toBe(true);
    expect(scanTopK({ ...s, k: 1_000 })).toHaveLength(267);
  });

  it('returns every row when k exceeds them, and nothing for k = 0 or no rows', () => {
    const random = seededRandom(5);
    const block = codes(random, 30 * 8);
    const query = codes(random, 8);
    expect(scanTopK({ codes: block, total: 30, dimension: 8, query, k: 1_000 })).toHaveLength(30);
    expect(scanTopK({ codes: block, total: 30, dimension: 8, query, k: 0 })).toHaveLength(0);
    expect(scanTopK({ codes: block, total: 0, dimension: 8, query, k: 10 })).toHaveLength(0);
  });

  it('scores an all-zero row 0 by cosine rather than dividing by its zero norm', () => {
    const dimension = 4;
    const block = Int8Array.from([0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1, -1]);
    const slots = scanTopK({ codes: block, total: 3, dimension, query: Int8Array.from([1, 1, 1, 1]), k: 3, cosine: true });
    expect(Array.from(slots)).toEqual([1, 0, 2]);
  });

  it('refuses a kernel name it does not know', () => {
    expect(() => useVectorScanKernel('avx9' as 'avx2')).toThrow(/no such kernel/);
    expect(vectorScanKernel()).toBe(kernel);
  });

  it('refuses arguments that would read past the codes or the query, or break the ranking', () => {
    const block = new Int8Array(10 * 4);
    const query = new Int8Array(4);
    expect(() => scanTopK({ codes: block, total: 11, dimension: 4, query, k: 1 })).toThrow(/codes must hold total \* dimension/);
    expect(() => scanTopK({ codes: block, total: 10, dimension: 4, query: new Int8Array(3), k: 1 })).toThrow(/query must hold dimension/);
    expect(() => scanTopK({ codes: block, total: 10, dimension: 4, query, k: 1, slots: Uint32Array.from([2, 10]) })).toThrow(/slots must ascend and be below total/);
    expect(() => scanTopK({ codes: block, total: 10, dimension: 4, query, k: 1, slots: Uint32Array.from([3, 3]) })).toThrow(/slots must ascend/);
    expect(() => scanTopK({ codes: block, total: 10, dimension: 4, query, k: 1, slots: Int32Array.from([1]) as unknown as Uint32Array })).toThrow(/slots must be a Uint32Array/);
    expect(() => scanTopK({ codes: block, total: 10, dimension: 0, query, k: 1 })).toThrow(/dimension must be/);
    expect(() => scanTopK({ codes: new Float32Array(40) as unknown as Int8Array, total: 10, dimension: 4, query, k: 1 })).toThrow(/codes must be an Int8Array/);
    expect(() => scanTopK({ codes: block, total: 10, dimension: 4, query, k: -1 })).toThrow(/k must be/);
  });
});

describe('estimateRows', () => {
  afterAll(() => {
    useVectorScanKernel(CHOSEN_KERNEL);
  });

  function floats(random: () => number, n: number): Float32Array {
    return Float32Array.from({ length: n }, () => random() * 2 - 1);
  }

  /** Each slot's estimate in a plain loop (in another order of additions: equal within rounding). */
  function reference(e: RowEstimates): number[] {
    return Array.from(e.slots, (slot) => {
      let dot = 0;
      for (let d = 0; d < e.dimension; d++) dot += e.codes[slot * e.dimension + d]! * e.query[d]!;
      return dot * e.scales[slot]!;
    });
  }

  it.each([1, 7, 8, 9, 100, 384])('gives each listed row the query\'s inner product with its codes times its scale, the same bits with every kernel, at %i dimensions', (dimension) => {
    const random = seededRandom(dimension + 1);
    const rows = 500;
    const block = codes(random, rows * dimension);
    const scales = floats(random, rows);
    // in any order, repeats allowed
    const slots = Uint32Array.from({ length: 232 }, () => Math.floor(random() * rows));
    const query = floats(random, dimension);
    const byKernel = KERNELS.map((kernel) => {
      useVectorScanKernel(kernel);
      return estimateRows({ codes: block, dimension, scales, query, slots, out: new Float64Array(slots.length) });
    });
    const expected = reference({ codes: block, dimension, scales, query, slots, out: new Float64Array(0) });
    byKernel[0]!.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 9));
    for (const other of byKernel.slice(1)) expect(other).toEqual(byKernel[0]);
    // a repeated slot, the same value
    const first = slots.indexOf(slots[0]!, 1);
    if (first > 0) expect(byKernel[0]![first]).toBe(byKernel[0]![0]);
  });

  it('estimates nothing for no slots, and writes only the first slots.length values of out', () => {
    const out = new Float64Array([7, 7, 7]);
    const e = { codes: Int8Array.from([1, 2, 3, 4]), dimension: 2, scales: Float32Array.from([1, 0.5]), query: Float32Array.from([1, 1]) };
    expect(Array.from(estimateRows({ ...e, slots: new Uint32Array(0), out }))).toEqual([7, 7, 7]);
    expect(Array.from(estimateRows({ ...e, slots: Uint32Array.from([1]), out }))).toEqual([3.5, 7, 7]);
  });

  it('refuses slots past the codes or the scales, a query of another length, and too short an out', () => {
    const e = { codes: new Int8Array(10 * 4), dimension: 4, scales: new Float32Array(8), query: new Float32Array(4), slots: Uint32Array.from([0]), out: new Float64Array(1) };
    expect(() => estimateRows({ ...e, slots: Uint32Array.from([8]) })).toThrow(/slots must have codes and a scale/);
    expect(() => estimateRows({ ...e, scales: new Float32Array(20), slots: Uint32Array.from([10]) })).toThrow(/slots must have codes and a scale/);
    expect(() => estimateRows({ ...e, query: new Float32Array(3) })).toThrow(/query must hold dimension values/);
    expect(() => estimateRows({ ...e, slots: Uint32Array.from([0, 1]) })).toThrow(/out must hold a value for each slot/);
    expect(() => estimateRows({ ...e, query: new Float64Array(4) as unknown as Float32Array })).toThrow(/query must be a Float32Array/);
  });
});

describe('exactProducts', () => {
  afterAll(() => {
    useVectorScanKernel(CHOSEN_KERNEL);
  });

  /** A half's value by its bits, from the definition of IEEE binary16. */
  function halfValue(bits: number): number {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0x1f) return fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY;
    return exponent === 0 ? sign * 2 ** -14 * (fraction / 1024) : sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }

  it('reads every half exactly, subnormals, infinities and NaNs included, with every kernel', () => {
    // each bit pattern alone in a vector of 9 (a block of 8 and a tail of 1), against a query of ones
    const query = new Float32Array(9).fill(1);
    for (const kernel of KERNELS) {
      useVectorScanKernel(kernel);
      for (const position of [0, 5, 8]) {
        const vectors: Uint16Array[] = [];
        for (let bits = 0; bits < 65_536; bits++) {
          const v = new Uint16Array(9);
          v[position] = bits;
          vectors.push(v);
        }
        const out = exactProducts(vectors, query);
        for (let bits = 0; bits < 65_536; bits++) {
          const want = halfValue(bits);
          if (Number.isNaN(want)) expect(out[bits]).toBeNaN();
          else if (out[bits] !== want) expect([kernel, position, bits, out[bits]]).toEqual([kernel, position, bits, want]);
        }
      }
    }
  });

  it.each([1, 8, 100, 384])('gives the inner product of halves and of floats with the query, the same bits with every kernel, at %i dimensions', (dimension) => {
    const random = seededRandom(dimension + 7);
    const query = Float32Array.from({ length: dimension }, () => random() * 2 - 1);
    const floats = Array.from({ length: 30 }, () => Float32Array.from({ length: dimension }, () => random() * 2 - 1));
    // halves of values in [-1, 1): sign, exponent 0..14, any fraction
    const halves = Array.from({ length: 30 }, () => Uint16Array.from({ length: dimension }, () => (random() < 0.5 ? 0x8000 : 0) | (Math.floor(random() * 15) << 10) | Math.floor(random() * 1024)));
    const plainDot = (v: ArrayLike<number>, value: (x: number) => number) => {
      let dot = 0;
      for (let d = 0; d < dimension; d++) dot += value(v[d]!) * query[d]!;
      return dot;
    };
    const byKernel = KERNELS.map((kernel) => {
      useVectorScanKernel(kernel);
      return exactProducts([...halves, ...floats], query);
    });
    halves.forEach((v, i) => expect(byKernel[0]![i]).toBeCloseTo(plainDot(v, halfValue), 9));
    floats.forEach((v, i) => expect(byKernel[0]![30 + i]).toBeCloseTo(plainDot(v, (x) => x), 9));
    for (const other of byKernel.slice(1)) expect(other).toEqual(byKernel[0]);
  });

  it('gives NaN for a vector missing or of another length, and refuses a short out', () => {
    const query = Float32Array.from([1, 2]);
    const out = exactProducts([undefined, new Uint16Array(3), new Float32Array([0.5, 0.25]), new Float64Array(2) as unknown as Float32Array], query);
    expect(Number.isNaN(out[0])).toBe(true);
    expect(Number.isNaN(out[1])).toBe(true);
    expect(out[2]).toBe(1);
    expect(Number.isNaN(out[3])).toBe(true);
    expect(() => exactProducts([new Float32Array(2)], query, new Float64Array(0))).toThrow(/out must hold a value for each vector/);
  });
});
