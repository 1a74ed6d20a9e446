/**
 * IEEE 754 half-precision floats, for vectors at rest: half the bytes of float32, and a relative
 * error of at most 2⁻¹¹ per component (about 5e-4), far below what separates two candidates when
 * the best few are rescored. Written here because Node 20 has no `Float16Array`, and the polyfills
 * index through a Proxy, which is too slow to decode an index of millions of components at start;
 * decoding is a table lookup per component.
 */

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** The half nearest to `value` (ties to even), as its 16 bits; beyond ±65504 it is ±Infinity. */
export function toFloat16Bits(value: number): number {
  scratch[0] = value;
  const bits = scratchBits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7f_ffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half (or zero): the implicit bit becomes explicit, then shifts out.
    if (e < -10) return sign;
    mantissa |= 0x80_0000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (half & 1) === 1)) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa rounds up into the exponent, as it should (up to Infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1;
  return sign | half;
}

/** The value of a half's 16 bits. */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa !== 0 ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

let table: Float32Array | undefined;

/** Every half's value, built on first use (256 KiB). */
function halfTable(): Float32Array {
  if (!table) {
    table = new Float32Array(65_536);
    for (let bits = 0; bits < 65_536; bits++) table[bits] = fromFloat16Bits(bits);
  }
  return table;
}

/** A vector as little-endian halves: 2 bytes a component. */
export function encodeFloat16(vector: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(vector.length * 2);
  for (let i = 0; i < vector.length; i++) out.writeUInt16LE(toFloat16Bits(vector[i]!), i * 2);
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
