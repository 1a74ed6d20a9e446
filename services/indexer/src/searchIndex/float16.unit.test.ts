import { describe, expect, it } from 'vitest';
import { decodeFloat16, encodeFloat16, fromFloat16Bits, toFloat16Bits } from './float16';

describe('float16 vectors', () => {
  it('knows the landmark halves', () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.5, 0x3800],
      [65504, 0x7bff],
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [Number.POSITIVE_INFINITY, 0x7c00],
      [Number.NEGATIVE_INFINITY, 0xfc00],
    ];
    for (const [value, bits] of cases) {
      expect(toFloat16Bits(value)).toBe(bits);
      expect(Object.is(fromFloat16Bits(bits), value)).toBe(true);
    }
    expect(toFloat16Bits(70000)).toBe(0x7c00); // beyond the largest half
    expect(toFloat16Bits(2 ** -26)).toBe(0); // below half the smallest subnormal
    expect(Number.isNaN(fromFloat16Bits(toFloat16Bits(Number.NaN)))).toBe(true);
  });

  it('rounds to the nearest half, ties to even', () => {
    // Between 1 and 1 + 2⁻¹⁰ the halfway point goes to the even mantissa (1); just above it, up.
    expect(toFloat16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(toFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(toFloat16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
    // A carry out of the mantissa moves to the next power of two.
    expect(fromFloat16Bits(toFloat16Bits(2 - 2 ** -12))).toBe(2);
    // Subnormals round too.
    expect(toFloat16Bits(1.5 * 2 ** -24)).toBe(0x0002);
    expect(toFloat16Bits(2.5 * 2 ** -24)).toBe(0x0002);
  });

  it('encodes every half exactly and any float within 2^-11 of itself', () => {
    for (let bits = 0; bits < 0x7c00; bits += 7) {
      expect(toFloat16Bits(fromFloat16Bits(bits))).toBe(bits);
      expect(toFloat16Bits(-fromFloat16Bits(bits))).toBe(bits | 0x8000);
    }
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const vector = Float32Array.from({ length: 4096 }, random);
    const bytes = encodeFloat16(vector);
    expect(bytes.byteLength).toBe(2 * vector.length);
    const back = decodeFloat16(bytes);
    for (let i = 0; i < vector.length; i++) {
      const error = Math.abs(back[i]! - vector[i]!);
      expect(error).toBeLessThanOrEqual(Math.max(Math.abs(vector[i]!) * 2 ** -11, 2 ** -25));
      expect(back[i]).toBe(fromFloat16Bits(toFloat16Bits(vector[i]!)));
    }
  });
});
