import { describe, expect, it } from 'vitest';

import { exponentOf, float16Bits, float16TableScale, float16Value, FLOAT16_TARGET_EXPONENT, toFloat16Table } from './staticModel/float16.js';

const isNaNBits = (h: number) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;

describe('float16Bits', () => {
  it('encodes exactly representable values', () => {
    expect(float16Bits(0)).toBe(0x0000);
    expect(float16Bits(-0)).toBe(0x8000);
    expect(float16Bits(1)).toBe(0x3c00);
    expect(float16Bits(-2)).toBe(0xc000);
    expect(float16Bits(0.5)).toBe(0x3800);
    expect(float16Bits(1.5)).toBe(0x3e00);
    expect(float16Bits(65504)).toBe(0x7bff); // largest half
    expect(float16Bits(2 ** -14)).toBe(0x0400); // smallest normal
    expect(float16Bits(1023 * 2 ** -24)).toBe(0x03ff); // largest subnormal
    expect(float16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(float16Bits(-(2 ** -24))).toBe(0x8001);
    expect(float16Bits(0.333251953125)).toBe(0x3555);
  });

  it('encodes infinities and NaN', () => {
    expect(float16Bits(Infinity)).toBe(0x7c00);
    expect(float16Bits(-Infinity)).toBe(0xfc00);
    expect(isNaNBits(float16Bits(NaN))).toBe(true);
  });

  it('rounds to the nearest half', () => {
    expect(float16Bits(0.1)).toBe(0x2e66); // 0.0999755859375
    expect(float16Bits(1 / 3)).toBe(0x3555);
    expect(float16Bits(-0.1)).toBe(0xae66);
    expect(float16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // just above the tie
    expect(float16Bits(1 + 2 ** -11 - 2 ** -20)).toBe(0x3c00); // just below it
    expect(float16Bits(2 ** -25 + 2 ** -35)).toBe(0x0001);
    expect(float16Bits(2 ** -26)).toBe(0x0000);
    expect(float16Bits(2 ** -140)).toBe(0x0000); // float32 subnormal
    expect(float16Bits(-(2 ** -26))).toBe(0x8000);
  });

  it('breaks ties to the even significand', () => {
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // between 1 (even) and 1 + 2^-10
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // between 0x3c01 and 0x3c02 (even)
    expect(float16Bits(2049)).toBe(0x6800); // 2048
    expect(float16Bits(2051)).toBe(0x6802); // 2052
    expect(float16Bits(2 ** -25)).toBe(0x0000); // between 0 and the smallest subnormal
    expect(float16Bits(3 * 2 ** -25)).toBe(0x0002);
    expect(float16Bits(1023.5 * 2 ** -24)).toBe(0x0400); // largest subnormal up to the smallest normal
    expect(float16Bits(2047.5 * 2 ** -14 * 2 ** -10)).toBe(0x0800); // carry into the next exponent
  });

  it('overflows to infinity from the halfway point above 65504', () => {
    expect(float16Bits(65519)).toBe(0x7bff);
    expect(float16Bits(65520)).toBe(0x7c00);
    expect(float16Bits(-65520)).toBe(0xfc00);
    expect(float16Bits(1e6)).toBe(0x7c00);
    expect(float16Bits(3e38)).toBe(0x7c00);
  });

  it('round-trips every half and rounds every midpoint to the even neighbour', () => {
    const failures: string[] = [];
    for (let h = 0; h < 0x10000; h++) {
      if (isNaNBits(h)) continue;
      if (float16Bits(float16Value(h)) !== h) failures.push(`round trip ${h.toString(16)}`);
      // Midpoint between h and the next half of the same sign (finite ones only).
      const next = h + 1;
      if ((h & 0x7fff) >= 0x7bff) continue;
      const a = float16Value(h);
      const b = float16Value(next);
      const mid = (a + b) / 2;
      const even = (h & 1) === 0 ? h : next;
      if (float16Bits(mid) !== even) failures.push(`midpoint ${h.toString(16)}`);
      const step = Math.abs(b - a) * 2 ** -8;
      const [below, above] = a < b ? [mid - step, mid + step] : [mid + step, mid - step];
      if (float16Bits(below) !== h) failures.push(`below midpoint ${h.toString(16)}`);
      if (float16Bits(above) !== next) failures.push(`above midpoint ${h.toString(16)}`);
    }
    expect(failures.slice(0, 10)).toEqual([]);
  });
});

describe('float16Value', () => {
  it('decodes normals, subnormals, zeros, infinities and NaN', () => {
    expect(float16Value(0x3c00)).toBe(1);
    expect(float16Value(0xc000)).toBe(-2);
    expect(float16Value(0x7bff)).toBe(65504);
    expect(float16Value(0x0400)).toBe(2 ** -14);
    expect(float16Value(0x0001)).toBe(2 ** -24);
    expect(float16Value(0x03ff)).toBe(1023 * 2 ** -24);
    expect(Object.is(float16Value(0x8000), -0)).toBe(true);
    expect(float16Value(0x7c00)).toBe(Infinity);
    expect(float16Value(0xfc00)).toBe(-Infinity);
    expect(float16Value(0x7e00)).toBeNaN();
  });
});

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
