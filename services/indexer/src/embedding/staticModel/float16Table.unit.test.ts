import { describe, expect, it } from 'vitest';
import { float16Bits, float16Value } from '../../numeric/float16';
import { exponentOf, float16TableScale, FLOAT16_TARGET_EXPONENT, toFloat16Table } from './float16Table';

describe('exponentOf', () => {
  it('is floor(log2 x) exactly at and next to every float32 power of two', () => {
    for (let e = -149; e <= 127; e++) {
      expect(exponentOf(2 ** e), `2^${e}`).toBe(e);
      if (e >= -126) expect(exponentOf(Math.fround(2 ** e * (2 - 2 ** -23))), `below 2^${e + 1}`).toBe(e);
    }
    expect(exponentOf(3.986715793609619)).toBe(1);
  });
});

describe('float16TableScale', () => {
  it('is the power of two that puts the largest magnitude in [2^13, 2^14)', () => {
    expect(FLOAT16_TARGET_EXPONENT).toBe(13);
    expect(float16TableScale(3.986715793609619)).toBe(2 ** 12); // the GloVe table's maximum
    expect(float16TableScale(4)).toBe(2 ** 11);
    expect(float16TableScale(2 ** 14)).toBe(0.5);
    expect(float16TableScale(1e-3)).toBe(2 ** 23);
    for (const max of [1e-30, 0.7, 1, 3.999, 123.4, 65504, 1e20]) {
      const scaled = max * float16TableScale(max);
      expect(scaled).toBeGreaterThanOrEqual(2 ** 13);
      expect(scaled).toBeLessThan(2 ** 14);
      expect(Number.isInteger(Math.log2(float16TableScale(max)))).toBe(true);
    }
  });

  it('leaves an all-zero table unscaled and rejects non-finite maxima', () => {
    expect(float16TableScale(0)).toBe(1);
    expect(() => float16TableScale(Infinity)).toThrow(RangeError);
    expect(() => float16TableScale(NaN)).toThrow(RangeError);
  });
});

describe('toFloat16Table', () => {
  it('scales by a power of two and rounds each value to the nearest half', () => {
    const values = Float32Array.from([0, 1, -0.5, 0.1, 3e-5, -(2 ** -20), 2 ** -28, 2 ** -40]);
    const table = toFloat16Table(values);
    expect(table.maxAbs).toBe(1);
    expect(table.scale).toBe(2 ** 13);
    expect(Array.from(table.bits)).toEqual(Array.from(values, (v) => float16Bits(v * 2 ** 13)));
    expect(table.bits[1]).toBe(0x7000); // 1 * 2^13 = 8192
    // Unscaled, every normal value is within half a unit in the last place (2^-11 relative).
    values.forEach((v, i) => {
      if (i >= 6) return;
      expect(Math.abs(float16Value(table.bits[i]!) / table.scale - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11);
    });
    // 2^-28 * 2^13 = 2^-15 is subnormal; 2^-40 * 2^13 = 2^-27 rounds to zero.
    expect(table.subnormal).toBe(1);
    expect(table.underflowed).toBe(1);
    expect(table.bits[6]).toBe(0x0200);
    expect(table.bits[7]).toBe(0x0000);
  });

  it('keeps tiny values normal that unscaled conversion would flush', () => {
    const values = Float32Array.from([0.002, 3e-9, -1e-8]);
    expect(float16Bits(3e-9)).toBe(0); // without the scale
    const table = toFloat16Table(values);
    expect(table.scale).toBe(2 ** 22);
    expect(table.subnormal + table.underflowed).toBe(0);
    values.forEach((v, i) => {
      expect(Math.abs(float16Value(table.bits[i]!) / table.scale - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11);
    });
  });

  it('handles an all-zero table and rejects non-finite values', () => {
    const zero = toFloat16Table(new Float32Array(4));
    expect(zero).toMatchObject({ scale: 1, maxAbs: 0, subnormal: 0, underflowed: 0 });
    expect(Array.from(zero.bits)).toEqual([0, 0, 0, 0]);
    expect(() => toFloat16Table(Float32Array.from([1, NaN]))).toThrow(/non-finite/);
    expect(() => toFloat16Table(Float32Array.from([Infinity]))).toThrow(/non-finite/);
  });
});
