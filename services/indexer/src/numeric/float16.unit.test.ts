import { describe, expect, it } from 'vitest';
import { decodeFloat16, encodeFloat16, float16Bits, float16Value } from './float16';

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
