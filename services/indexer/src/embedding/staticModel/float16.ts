/**
 * IEEE 754 binary16 ("half", ONNX FLOAT16) encoding for the static model's embedding table.
 *
 * A half has 1 sign bit, 5 exponent bits (bias 15) and 10 fraction bits: normal values span
 * 2^-14 .. 65504 with a relative step of 2^-10; below 2^-14 the subnormals keep a fixed absolute
 * step of 2^-24, so small values lose relative precision. The table is therefore scaled by a power
 * of two before conversion (exact in binary floating point) so that its largest magnitude sits in
 * [2^13, 2^14): far from overflow, and with everything down to 2^-27 of the largest value normal.
 * The embedder L2-normalises the mean of the looked-up vectors, so a uniform scale of the table
 * does not change its output.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * Binary16 bits of the nearest half to `value`, ties to even; beyond the largest half, ±Infinity.
 * `value` is first rounded to float32, so it is exact for float32 inputs (a general double can be
 * rounded twice).
 */
export function float16Bits(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const fraction = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (fraction !== 0 ? 0x200 : 0); // Infinity, or a quiet NaN
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent >= 1) {
    // Normal: keep 10 of the 23 fraction bits. A carry out of the fraction correctly bumps the
    // exponent (and 65520 and above round to Infinity).
    return sign | roundShift((halfExponent << 23) | fraction, 13);
  }
  // Subnormal or zero: the value in units of 2^-24 is (1.fraction) * 2^(halfExponent + 9),
  // i.e. the 24-bit significand shifted right by 14 - halfExponent. Below 2^-25 it rounds to 0.
  if (halfExponent < -10) return sign;
  const significand = exponent === 0 ? fraction : fraction | 0x800000;
  return sign | roundShift(significand, 14 - halfExponent);
}

/** `value >> shift`, rounded to nearest with ties to even. */
function roundShift(value: number, shift: number): number {
  const kept = value >>> shift;
  const rest = value & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  return rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept;
}

/** The number a binary16 bit pattern stands for. */
export function float16Value(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

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

export interface Float16Table {
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
