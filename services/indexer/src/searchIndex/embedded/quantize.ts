/** int8 codes of vectors: the query's, and the stored ones at one shared norm (see quantizeStored). */

/** int8 codes of `v` spanning the whole range (its largest component at ±127): v ≈ codes × scale. */
export function quantize(v: Float32Array, out: Int8Array, offset: number): number {
  let max = 0;
  for (let d = 0; d < v.length; d++) max = Math.max(max, Math.abs(v[d]!));
  const scale = max > 0 ? max / 127 : 1;
  for (let d = 0; d < v.length; d++) out[offset + d] = Math.round(v[d]! / scale);
  return scale;
}

/**
 * A stored vector's int8 codes, at one norm for every vector of the dimension: `CODE_SPREAD` × √dim,
 * so a typical component (1/√dim of a unit vector) codes as ±CODE_SPREAD, and one up to
 * 127/CODE_SPREAD times larger still fits. Equal norms let the SIMD scan rank by the codes' inner
 * product, a third of the cosine's work (no norms), in the cosine's order. A vector with a larger
 * component is scaled to fit: a smaller norm, so `shrunk`, which the scan makes up for (see
 * DenseRanker.scanFound in dense.ts). Below 16 dimensions that norm would be under 127: the codes
 * span the range as {@link quantize}'s. v ≈ codes × scale.
 */
export function quantizeStored(v: Float32Array, out: Int8Array, offset: number): { scale: number; shrunk: boolean } {
  if (!codesShareNorm(v.length)) return { scale: quantize(v, out, offset), shrunk: false };
  const norm = CODE_SPREAD * Math.sqrt(v.length);
  let max = 0;
  let squares = 0;
  for (let d = 0; d < v.length; d++) {
    max = Math.max(max, Math.abs(v[d]!));
    squares += v[d]! * v[d]!;
  }
  if (max === 0) return { scale: quantize(v, out, offset), shrunk: false };
  const step = Math.sqrt(squares) / norm;
  const shrunk = max / 127 > step;
  const scale = shrunk ? max / 127 : step;
  for (let d = 0; d < v.length; d++) out[offset + d] = Math.round(v[d]! / scale);
  return { scale, shrunk };
}

/** A typical component's code (see quantizeStored): about the precision of spanning ±127 by the largest. */
const CODE_SPREAD = 32;

/** Above this share of shrunk codes (see quantizeStored), scans rank by cosine, not by inner product plus the shrunk. */
export const MAX_SHRUNK_SHARE = 1 / 64;

/** Whether stored codes of this dimension share one norm (see quantizeStored), so scans rank by inner product. */
export function codesShareNorm(dimension: number): boolean {
  return CODE_SPREAD * Math.sqrt(dimension) >= 127;
}
