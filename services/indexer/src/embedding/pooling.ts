/**
 * A sum of token vectors as the unit-length mean (the mean's 1/count cancels in the normalisation);
 * all zeros when the norm is 0 or not finite. Shared by both runtimes, so their vectors are equal.
 */
export function normalizedSum(sum: Float64Array): Float32Array {
  const dim = sum.length;
  const out = new Float32Array(dim);
  let norm = 0;
  for (let k = 0; k < dim; k++) norm += sum[k]! * sum[k]!;
  norm = Math.sqrt(norm);
  if (!(norm > 0) || !Number.isFinite(norm)) return out;
  for (let k = 0; k < dim; k++) out[k] = sum[k]! / norm;
  return out;
}
