/**
 * Word-vector weighting baked into the static model's embedding table.
 *
 * 1. SIF ("smooth inverse frequency") weights: w(word) = a / (a + p(word)), with p(word) taken
 *    from Zipf's law on the word's corpus-frequency rank r (1-based):
 *        p(r) = (1 / r) / H,   H = sum_{k=1..N} 1/k   (N = size of the ranked source vocabulary)
 * 2. Common-component removal: u = first principal component of the SIF-weighted vectors,
 *    each word weighted by p(word) (uncentred second-moment matrix, i.e. the direction that
 *    dominates frequency-weighted sentence means); every weighted vector v becomes v - (v·u)u.
 *    This is linear, so doing it per word equals doing it on a sentence's mean vector.
 *
 * All accumulations are in float64; vectors are stored as float32 rows of a flat array.
 */

/** Zipf probabilities p(r) = (1/r)/H for ranks 1..count (index r-1). */
export function zipfProbabilities(count: number): Float64Array {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`zipfProbabilities: bad count ${count}`);
  let harmonic = 0;
  // Sum smallest terms first for accuracy.
  for (let r = count; r >= 1; r--) harmonic += 1 / r;
  const p = new Float64Array(count);
  for (let r = 1; r <= count; r++) p[r - 1] = 1 / (r * harmonic);
  return p;
}

/** SIF weight a / (a + p). */
export function sifWeight(probability: number, a: number): number {
  return a / (a + probability);
}

/** Multiplies row i of `vectors` (row-major, `dimension` wide) by `weights[i]`, in place. */
export function scaleRows(vectors: Float32Array, dimension: number, weights: ArrayLike<number>): void {
  const rows = vectors.length / dimension;
  if (weights.length !== rows) throw new Error(`scaleRows: ${weights.length} weights for ${rows} rows`);
  for (let i = 0; i < rows; i++) {
    const w = weights[i]!;
    const base = i * dimension;
    for (let k = 0; k < dimension; k++) vectors[base + k] = vectors[base + k]! * w;
  }
}

interface PrincipalComponentOptions {
  maxIterations?: number;
  /** Stop when successive unit vectors differ by less than this (L2). */
  tolerance?: number;
}

interface PrincipalComponent {
  /** Unit vector (float64). All zeros if the weighted second-moment matrix is zero. */
  direction: Float64Array;
  /** Largest eigenvalue of the weighted second-moment matrix. */
  eigenvalue: number;
  iterations: number;
  converged: boolean;
}

/**
 * First principal component of the rows of `vectors`, each row weighted by `rowWeights[i]`:
 * the top eigenvector of C = sum_i rowWeights[i] * x_i x_i^T (not mean-centred), found by
 * power iteration on the dimension x dimension matrix C.
 */
export function firstPrincipalComponent(
  vectors: Float32Array,
  dimension: number,
  rowWeights: ArrayLike<number>,
  options: PrincipalComponentOptions = {},
): PrincipalComponent {
  const rows = vectors.length / dimension;
  if (rowWeights.length !== rows) throw new Error(`firstPrincipalComponent: ${rowWeights.length} weights for ${rows} rows`);
  const maxIterations = options.maxIterations ?? 10_000;
  const tolerance = options.tolerance ?? 1e-12;
  const d = dimension;

  // Upper triangle of C, plus the weighted mean as a starting vector.
  const c = new Float64Array(d * d);
  const mean = new Float64Array(d);
  const x = new Float64Array(d);
  for (let i = 0; i < rows; i++) {
    const w = rowWeights[i]!;
    if (w === 0) continue;
    const base = i * d;
    for (let k = 0; k < d; k++) x[k] = vectors[base + k]!;
    for (let a = 0; a < d; a++) {
      const wa = w * x[a]!;
      if (wa === 0) continue;
      mean[a] = mean[a]! + wa;
      const rowOffset = a * d;
      for (let b = a; b < d; b++) c[rowOffset + b] = c[rowOffset + b]! + wa * x[b]!;
    }
  }
  for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) c[a * d + b] = c[b * d + a]!;

  let v = Float64Array.from(mean);
  if (normalizeInPlace(v) === 0) {
    v = new Float64Array(d).fill(1 / Math.sqrt(d));
  }
  const next = new Float64Array(d);
  let eigenvalue = 0;
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    for (let a = 0; a < d; a++) {
      let s = 0;
      const rowOffset = a * d;
      for (let b = 0; b < d; b++) s += c[rowOffset + b]! * v[b]!;
      next[a] = s;
    }
    eigenvalue = normalizeInPlace(next);
    if (eigenvalue === 0) {
      // C v = 0: either C is zero or the start vector is in its null space; C is PSD, so
      // the zero matrix is the only case reachable from the (weighted-mean) start in practice.
      return { direction: new Float64Array(d), eigenvalue: 0, iterations: iteration, converged: true };
    }
    let delta = 0;
    for (let a = 0; a < d; a++) delta += (next[a]! - v[a]!) ** 2;
    v.set(next);
    if (Math.sqrt(delta) < tolerance) return { direction: v, eigenvalue, iterations: iteration, converged: true };
  }
  return { direction: v, eigenvalue, iterations: maxIterations, converged: false };
}

/** v <- v - (v·u)u for every row, in place (`u` must be a unit vector or zero). */
export function removeComponent(vectors: Float32Array, dimension: number, u: ArrayLike<number>): void {
  if (u.length !== dimension) throw new Error(`removeComponent: direction has ${u.length} values, expected ${dimension}`);
  const rows = vectors.length / dimension;
  for (let i = 0; i < rows; i++) {
    const base = i * dimension;
    let dot = 0;
    for (let k = 0; k < dimension; k++) dot += vectors[base + k]! * u[k]!;
    if (dot === 0) continue;
    for (let k = 0; k < dimension; k++) vectors[base + k] = vectors[base + k]! - dot * u[k]!;
  }
}

function normalizeInPlace(v: Float64Array): number {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s);
  if (n === 0 || !Number.isFinite(n)) return 0;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / n;
  return n;
}

interface WeightingOptions {
  /** SIF smoothing constant `a`. Default 1e-4. */
  sifA: number;
  /** Remove the p-weighted first principal component. Default true. */
  removePrincipalComponent: boolean;
}

export const DEFAULT_WEIGHTING: Readonly<WeightingOptions> = Object.freeze({ sifA: 1e-4, removePrincipalComponent: true });

interface WeightingResult {
  /** The removed direction (null when removal is off or the matrix was zero). */
  principalComponent: Float64Array | null;
  principalComponentIterations: number;
  principalComponentConverged: boolean;
  /** Smallest and largest SIF weight applied. */
  minWeight: number;
  maxWeight: number;
}

/**
 * Applies SIF weighting and (optionally) common-component removal to `vectors` in place.
 * `ranks[i]` is the 1-based frequency rank of row i in a source vocabulary of `sourceSize`
 * words (rows may be a subset of the source, e.g. after dropping unreachable words).
 */
export function applyWeighting(
  vectors: Float32Array,
  dimension: number,
  ranks: ArrayLike<number>,
  sourceSize: number,
  options: WeightingOptions = DEFAULT_WEIGHTING,
): WeightingResult {
  if (!(options.sifA > 0) || !Number.isFinite(options.sifA)) throw new RangeError(`SIF constant a must be > 0 (got ${options.sifA})`);
  const rows = vectors.length / dimension;
  if (ranks.length !== rows) throw new Error(`applyWeighting: ${ranks.length} ranks for ${rows} rows`);
  const zipf = zipfProbabilities(sourceSize);
  const p = new Float64Array(rows);
  const weights = new Float64Array(rows);
  let minWeight = Infinity;
  let maxWeight = -Infinity;
  for (let i = 0; i < rows; i++) {
    const rank = ranks[i]!;
    if (!Number.isInteger(rank) || rank < 1 || rank > sourceSize) throw new RangeError(`row ${i}: rank ${rank} outside 1..${sourceSize}`);
    p[i] = zipf[rank - 1]!;
    const w = sifWeight(p[i]!, options.sifA);
    weights[i] = w;
    if (w < minWeight) minWeight = w;
    if (w > maxWeight) maxWeight = w;
  }
  scaleRows(vectors, dimension, weights);
  if (!options.removePrincipalComponent || rows === 0) {
    return { principalComponent: null, principalComponentIterations: 0, principalComponentConverged: true, minWeight, maxWeight };
  }
  const pc = firstPrincipalComponent(vectors, dimension, p);
  if (pc.eigenvalue === 0) {
    return { principalComponent: null, principalComponentIterations: pc.iterations, principalComponentConverged: true, minWeight, maxWeight };
  }
  removeComponent(vectors, dimension, pc.direction);
  return {
    principalComponent: pc.direction,
    principalComponentIterations: pc.iterations,
    principalComponentConverged: pc.converged,
    minWeight,
    maxWeight,
  };
}
