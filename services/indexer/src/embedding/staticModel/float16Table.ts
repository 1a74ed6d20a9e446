/**
 * The static model's embedding table as IEEE halves (see numeric/float16.ts).
 *
 * Below 2^-14 the halves' subnormals lose relative precision, so the table is scaled by a power of
 * two before conversion (exact in binary floating point) so that its largest magnitude sits in
 * [2^13, 2^14): far from overflow, and with everything down to 2^-27 of the largest value normal.
 * The embedder L2-normalises the mean of the looked-up vectors, so a uniform scale of the table
 * does not change its output.
 */
import { float16Bits } from '../../numeric/float16';

/** Exponent the scaled table's largest magnitude gets: it lands in [2^13, 2^14), 4x below the float16 maximum. */
export const FLOAT16_TARGET_EXPONENT = 13;

/** floor(log2(x)) for finite x > 0, exact (Math.log2 may be off by one next to powers of two). */
export function exponentOf(x: number): number {
  let e = Math.floor(Math.log2(x));
  if (2 ** e > x) e--;
  else if (2 ** (e + 1) <= x) e++;
  return e;
}

/**
 * The power of two that puts `maxAbs` in [2^13, 2^14). 1 for an all-zero table. Throws on a
 * non-finite maximum.
 */
export function float16TableScale(maxAbs: number): number {
  if (!Number.isFinite(maxAbs) || maxAbs < 0) throw new RangeError(`float16TableScale: bad maximum magnitude ${maxAbs}`);
  if (maxAbs === 0) return 1;
  return 2 ** (FLOAT16_TARGET_EXPONENT - exponentOf(maxAbs));
}

interface Float16Table {
  /** Binary16 bit patterns of `values[i] * scale`. */
  bits: Uint16Array;
  /** Power of two the values were multiplied by. */
  scale: number;
  /** Largest |value| before scaling. */
  maxAbs: number;
  /** Non-zero inputs that became half subnormals (reduced precision) or zero after scaling. */
  subnormal: number;
  underflowed: number;
}

/** Scales `values` by `float16TableScale(max |value|)` and converts them to binary16, ties to even. */
export function toFloat16Table(values: Float32Array): Float16Table {
  let maxAbs = 0;
  for (const v of values) {
    const a = Math.abs(v);
    if (!(a <= maxAbs)) {
      if (!Number.isFinite(a)) throw new RangeError(`toFloat16Table: non-finite value ${v}`);
      maxAbs = a;
    }
  }
  const scale = float16TableScale(maxAbs);
  const bits = new Uint16Array(values.length);
  let subnormal = 0;
  let underflowed = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    // v * scale is exact, and so is its rounding to float32 inside float16Bits unless it falls
    // below 2^-126, where the half is zero either way.
    const h = float16Bits(v * scale);
    bits[i] = h;
    if (v !== 0 && (h & 0x7c00) === 0) {
      if ((h & 0x3ff) === 0) underflowed++;
      else subnormal++;
    }
  }
  return { bits, scale, maxAbs, subnormal, underflowed };
}
