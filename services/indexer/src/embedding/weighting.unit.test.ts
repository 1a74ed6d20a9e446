import { describe, expect, it } from 'vitest';

import {
  applyWeighting,
  firstPrincipalComponent,
  removeComponent,
  scaleRows,
  sifWeight,
  zipfProbabilities,
} from './staticModel/weighting.js';

const dot = (a: ArrayLike<number>, b: ArrayLike<number>, aOffset = 0) => {
  let s = 0;
  for (let k = 0; k < b.length; k++) s += a[aOffset + k]! * b[k]!;
  return s;
};

/** Deterministic pseudo-random numbers in [-1, 1). */
function noise(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return (x / 2147483648) * 2 - 1;
  };
}

/** A tiny vocabulary whose vectors share a strong common direction `e` plus noise. */
function syntheticVocabulary(rows: number, dimension: number) {
  const e = new Float64Array(dimension).map((_, k) => (k % 2 === 0 ? 1 : -0.5));
  const norm = Math.sqrt(dot(e, e));
  e.forEach((v, k) => (e[k] = v / norm));
  const rand = noise(7);
  const vectors = new Float32Array(rows * dimension);
  for (let i = 0; i < rows; i++) {
    const common = 3 + rand();
    for (let k = 0; k < dimension; k++) vectors[i * dimension + k] = common * e[k]! + 0.3 * rand();
  }
  return { vectors, e };
}

describe('Zipf probabilities and SIF weights', () => {
  it('p(r) = (1/r)/H sums to 1 and decreases with rank', () => {
    const p = zipfProbabilities(1000);
    expect(p.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
    const h = p[0]! ** -1; // p(1) = 1/H
    expect(p[9]!).toBeCloseTo(1 / (10 * h), 15);
    for (let i = 1; i < p.length; i++) expect(p[i]!).toBeLessThan(p[i - 1]!);
  });

  it('SIF weights increase monotonically with rank and stay in (0, 1)', () => {
    const p = zipfProbabilities(50);
    const w = Array.from(p, (x) => sifWeight(x, 1e-4));
    for (let i = 1; i < w.length; i++) expect(w[i]!).toBeGreaterThan(w[i - 1]!);
    expect(w[0]!).toBeGreaterThan(0);
    expect(w[w.length - 1]!).toBeLessThan(1);
    expect(sifWeight(1e-4, 1e-4)).toBe(0.5);
  });

  it('scaleRows multiplies each row by its weight', () => {
    const v = Float32Array.from([1, 2, 3, 4]);
    scaleRows(v, 2, [2, 0.5]);
    expect(Array.from(v)).toEqual([2, 4, 1.5, 2]);
  });
});

describe('principal component removal', () => {
  it('finds the dominant weighted direction exactly on a 2-d example', () => {
    // C = 3 * e1 e1^T + 1 * e2 e2^T -> u = ±e1, eigenvalue 3
    const pc = firstPrincipalComponent(Float32Array.from([1, 0, 0, 1]), 2, [3, 1]);
    expect(pc.converged).toBe(true);
    expect(Math.abs(pc.direction[0]!)).toBeCloseTo(1, 9);
    expect(pc.direction[1]!).toBeCloseTo(0, 9);
    expect(pc.eigenvalue).toBeCloseTo(3, 9);
  });

  it('recovers the common direction of a synthetic vocabulary', () => {
    const { vectors, e } = syntheticVocabulary(40, 6);
    const pc = firstPrincipalComponent(vectors, 6, zipfProbabilities(40));
    expect(Math.abs(dot(pc.direction, e))).toBeGreaterThan(0.99);
    expect(dot(pc.direction, pc.direction)).toBeCloseTo(1, 12);
  });

  it('leaves every vector orthogonal to u and keeps the orthogonal part unchanged', () => {
    const { vectors } = syntheticVocabulary(40, 6);
    const before = Float32Array.from(vectors);
    const u = firstPrincipalComponent(vectors, 6, zipfProbabilities(40)).direction;
    removeComponent(vectors, 6, u);
    for (let i = 0; i < 40; i++) {
      expect(Math.abs(dot(vectors, u, i * 6))).toBeLessThan(1e-5);
      const projection = dot(before, u, i * 6);
      for (let k = 0; k < 6; k++) expect(vectors[i * 6 + k]!).toBeCloseTo(before[i * 6 + k]! - projection * u[k]!, 5);
    }
  });

  it('returns a zero direction for all-zero vectors', () => {
    const pc = firstPrincipalComponent(new Float32Array(12), 3, [1, 1, 1, 1]);
    expect(pc.eigenvalue).toBe(0);
    expect(Array.from(pc.direction)).toEqual([0, 0, 0]);
  });
});

describe('applyWeighting', () => {
  it('applies SIF weights from the source ranks, then removes the common component', () => {
    const { vectors } = syntheticVocabulary(30, 4);
    // Keep every other source word (ranks 1, 3, 5, ...) as a filtered vocabulary would.
    const ranks = Int32Array.from({ length: 15 }, (_, i) => 2 * i + 1);
    const kept = new Float32Array(15 * 4);
    ranks.forEach((r, i) => kept.set(vectors.subarray((r - 1) * 4, r * 4), i * 4));

    const sifOnly = Float32Array.from(kept);
    applyWeighting(sifOnly, 4, ranks, 30, { sifA: 1e-3, removePrincipalComponent: false });
    const p = zipfProbabilities(30);
    ranks.forEach((r, i) => {
      const w = 1e-3 / (1e-3 + p[r - 1]!);
      for (let k = 0; k < 4; k++) expect(sifOnly[i * 4 + k]!).toBeCloseTo(kept[i * 4 + k]! * w, 6);
    });

    const full = Float32Array.from(kept);
    const result = applyWeighting(full, 4, ranks, 30, { sifA: 1e-3, removePrincipalComponent: true });
    expect(result.principalComponent).not.toBeNull();
    const u = result.principalComponent!;
    for (let i = 0; i < 15; i++) expect(Math.abs(dot(full, u, i * 4))).toBeLessThan(1e-5);
    expect(result.minWeight).toBeLessThan(result.maxWeight);
  });

  it('validates its inputs', () => {
    expect(() => applyWeighting(new Float32Array(4), 2, [1, 2], 2, { sifA: 0, removePrincipalComponent: false })).toThrow(RangeError);
    expect(() => applyWeighting(new Float32Array(4), 2, [1, 3], 2, { sifA: 1e-4, removePrincipalComponent: false })).toThrow(/rank 3/);
  });
});
