import { float16Bits, float16Value } from '../embedding/staticModel/float16';

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
export function halfTable(): Float32Array {
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
