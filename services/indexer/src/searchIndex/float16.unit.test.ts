import { describe, expect, it } from 'vitest';
import { float16Bits, float16Value } from '../embedding/staticModel/float16';
import { decodeFloat16, encodeFloat16 } from './float16';

describe('float16 vectors at rest', () => {
  it('keeps each component within 2^-11 of itself, as the nearest half', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const vector = Float32Array.from({ length: 4096 }, random);
    vector.set([0, -0, 1, -1, 2 ** -14, 2 ** -24], 0);
    const bytes = encodeFloat16(vector);
    expect(bytes.byteLength).toBe(2 * vector.length);
    const back = decodeFloat16(bytes);
    for (let i = 0; i < vector.length; i++) {
      expect(Math.abs(back[i]! - vector[i]!)).toBeLessThanOrEqual(Math.max(Math.abs(vector[i]!) * 2 ** -11, 2 ** -25));
      expect(Object.is(back[i], float16Value(float16Bits(vector[i]!)))).toBe(true);
    }
    expect([...back.subarray(0, 6)]).toEqual([0, -0, 1, -1, 2 ** -14, 2 ** -24]);
  });

  it('decodes every half the way the conversion reads it', () => {
    const all = Buffer.alloc(2 * 65_536);
    for (let bits = 0; bits < 65_536; bits++) all.writeUInt16LE(bits, 2 * bits);
    const values = decodeFloat16(all);
    for (let bits = 0; bits < 65_536; bits++) {
      const expected = float16Value(bits);
      if (Number.isNaN(expected)) expect(Number.isNaN(values[bits]!)).toBe(true);
      else expect(values[bits]).toBe(expected);
    }
  });
});
