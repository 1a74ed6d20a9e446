/**
 * IEEE 754 binary16 ("half") numbers, shared by the static model's table (embedding/staticModel)
 * and the embedded index's vectors at rest (searchIndex/embedded).
 *
 * A half has 1 sign bit, 5 exponent bits (bias 15) and 10 fraction bits: normal values span
 * 2^-14 .. 65504 with a relative step of 2^-10; below 2^-14 the subnormals keep a fixed absolute
 * step of 2^-24.
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

/**
 * Vectors at rest as IEEE half floats (the conversion the static model's table uses): half the
 * bytes of float32, and a relative error of at most 2⁻¹¹ per component (about 5e-4), far below what
 * separates two candidates when the best few are rescored. Embeddings are L2-normalised, so their
 * components sit well inside the normal range of a half. Node 20 has no `Float16Array`, and the
 * polyfills index through a Proxy, too slow to decode an index of millions of components at start:
 * decoding here is a table lookup per component.
 */

let table: Float32Array | undefined;

/** Every half's value by its bits, built on first use (256 KiB). */
function halfTable(): Float32Array {
  if (!table) {
    table = new Float32Array(65_536);
    for (let bits = 0; bits < 65_536; bits++) table[bits] = float16Value(bits);
  }
  return table;
}

/** A vector as little-endian halves: 2 bytes a component. */
export function encodeFloat16(vector: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(vector.length * 2);
  for (let i = 0; i < vector.length; i++) out.writeUInt16LE(float16Bits(vector[i]!), i * 2);
  return out;
}

/** The halves `encodeFloat16` wrote, as they are (2 bytes a component; `halfTable` gives their values). */
export function readHalves(bytes: Uint8Array): Uint16Array {
  const n = bytes.byteLength >>> 1;
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = bytes[2 * i]! | (bytes[2 * i + 1]! << 8);
  return out;
}

/** The vector `encodeFloat16` wrote. */
export function decodeFloat16(bytes: Uint8Array): Float32Array {
  const values = halfTable();
  const n = bytes.byteLength >>> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = values[bytes[2 * i]! | (bytes[2 * i + 1]! << 8)]!;
  return out;
}
