import { describe, it, expect } from 'vitest';
import { analyze } from './analyzer.js';
import {
  bm25TermWeight,
  DEFAULT_BM25_OPTIONS,
  encodeDocument,
  encodeQuery,
  idf,
  termId,
} from './sparse.js';
import type { SparseVector } from './sparse.js';

function expectWellFormed(v: SparseVector): void {
  expect(v.indices).toHaveLength(v.values.length);
  for (let i = 0; i < v.indices.length; i++) {
    const id = v.indices[i] as number;
    expect(Number.isInteger(id) && id >= 0 && id <= 0xffffffff).toBe(true);
    if (i > 0) expect(id).toBeGreaterThan(v.indices[i - 1] as number);
  }
}

/** Weight of `word` (analyzed the way the encoders analyze it) in `v`. */
const weightOf = (v: SparseVector, word: string): number | undefined => {
  const i = v.indices.indexOf(termId(analyze(word)[0] ?? word));
  return i === -1 ? undefined : v.values[i];
};

describe('termId', () => {
  it('is 32-bit FNV-1a over UTF-8 (published test vectors)', () => {
    expect(termId('')).toBe(0x811c9dc5);
    expect(termId('a')).toBe(0xe40c292c);
    expect(termId('foobar')).toBe(0xbf9cf968);
  });

  it('encodes non-ASCII as UTF-8, including astral characters', () => {
    const viaBytes = (s: string): number => {
      let h = 0x811c9dc5;
      for (const byte of Buffer.from(s, 'utf8')) h = Math.imul(h ^ byte, 0x01000193);
      return h >>> 0;
    };
    for (const s of ['café', '東京', '𝔘nicode😀', 'ß']) expect(termId(s)).toBe(viaBytes(s));
  });

  it('returns unsigned integers that differ for different terms', () => {
    const terms = analyze('vector database memo search index chunk embed query rank fusion');
    const ids = terms.map(termId);
    expect(new Set(ids).size).toBe(terms.length);
    for (const id of ids) expect(id >>> 0).toBe(id);
  });
});

describe('encodeDocument', () => {
  it('weights each distinct analyzed term with the BM25 document formula', () => {
    const text = 'Memos about memos: the memo index indexes memos.';
    const doc = encodeDocument(text);
    expectWellFormed(doc);
    // analyzed: memo, about, memo, memo, index, index, memo → dl = 7
    expect(doc.length).toBe(7);
    expect(doc.indices).toHaveLength(3);
    const { k1, b, avgDocLength } = DEFAULT_BM25_OPTIONS;
    const expected = (tf: number): number =>
      (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * 7) / avgDocLength));
    expect(weightOf(doc, 'memo')).toBeCloseTo(expected(4), 12);
    expect(weightOf(doc, 'index')).toBeCloseTo(expected(2), 12);
    expect(weightOf(doc, 'about')).toBeCloseTo(expected(1), 12);
    expect(weightOf(doc, 'the')).toBeUndefined();
  });

  it('honours k1, b and avgDocLength', () => {
    const doc = encodeDocument('alpha alpha beta', { k1: 1.2, b: 0.75, avgDocLength: 3 });
    expect(weightOf(doc, 'alpha')).toBeCloseTo((2 * 2.2) / (2 + 1.2), 12);
    const noNorm = encodeDocument('alpha beta gamma delta', { b: 0 });
    expect(weightOf(noNorm, 'alpha')).toBeCloseTo(1, 12);
    expect(bm25TermWeight(2, 3, { k1: 1.2, b: 0.75, avgDocLength: 3 })).toBeCloseTo(4.4 / 3.2, 12);
  });

  it('saturates with term frequency and penalises long documents', () => {
    const tf = (n: number): number =>
      weightOf(encodeDocument(`${'word '.repeat(n)}filler`), 'word') ?? 0;
    expect(tf(2)).toBeGreaterThan(tf(1));
    expect(tf(20) - tf(10)).toBeLessThan(tf(2) - tf(1));
    expect(tf(1000)).toBeLessThan(DEFAULT_BM25_OPTIONS.k1 + 1);
    const short = encodeDocument('needle hay');
    const long = encodeDocument(`needle ${'hay '.repeat(2000)}`);
    expect(weightOf(long, 'needle')).toBeLessThan(weightOf(short, 'needle') ?? 0);
  });

  it('returns an empty vector for text without terms', () => {
    expect(encodeDocument('')).toEqual({ indices: [], values: [], length: 0 });
    expect(encodeDocument('the of and, to!')).toEqual({ indices: [], values: [], length: 0 });
  });

  it('rejects invalid parameters', () => {
    expect(() => encodeDocument('x', { k1: -1 })).toThrow(RangeError);
    expect(() => encodeDocument('x', { b: 2 })).toThrow(RangeError);
    expect(() => encodeDocument('x', { avgDocLength: 0 })).toThrow(RangeError);
  });

  it('is deterministic', () => {
    const text = 'Qdrant stores sparse vectors; BM25 weights them. Déjà vu, 東京, 3.14.';
    expect(encodeDocument(text)).toEqual(encodeDocument(text));
  });
});

describe('encodeQuery', () => {
  it('counts repeated query terms', () => {
    const q = encodeQuery('memo Memos search the memo');
    expectWellFormed(q);
    expect(weightOf(q, 'memo')).toBe(3);
    expect(weightOf(q, 'search')).toBe(1);
    expect(q.indices).toHaveLength(2);
  });

  it('uses the same term ids as documents', () => {
    const doc = encodeDocument('Searching indexed memos');
    const q = encodeQuery('search memo');
    for (const id of q.indices) expect(doc.indices).toContain(id);
  });

  it('is empty for stopword-only queries', () => {
    expect(encodeQuery('to be or not to be')).toEqual({ indices: [], values: [] });
  });
});

describe('idf', () => {
  it('is ln(1 + (n − df + 0.5) / (df + 0.5))', () => {
    expect(idf(10, 1)).toBeCloseTo(Math.log(1 + 9.5 / 1.5), 12);
    expect(idf(1000, 1000)).toBeCloseTo(Math.log(1 + 0.5 / 1000.5), 12);
  });

  it('is positive and decreases as a term gets more common', () => {
    let last = Infinity;
    for (let df = 0; df <= 100; df++) {
      const v = idf(100, df);
      expect(v).toBeGreaterThan(0);
      expect(v).toBeLessThan(last);
      last = v;
    }
  });

  it('clamps inconsistent document frequencies', () => {
    expect(idf(10, 20)).toBe(idf(10, 10));
    expect(idf(10, -5)).toBe(idf(10, 0));
    expect(Number.isNaN(idf(0, 3))).toBe(false);
  });
});

describe('termFrequencies and weighDocument', () => {
  it('count analyzed terms and weigh them into exactly what encodeDocument stores', async () => {
    const { termFrequencies, weighDocument, encodeDocument: encode, termId: id } = await import('./sparse.js');
    const tf = termFrequencies('Turbines spin; the turbine blade spins.');
    expect(tf.length).toBe(5);
    expect(tf.values[tf.indices.indexOf(id('turbin'))]).toBe(2);
    expect(weighDocument(tf, { avgDocLength: 7 })).toEqual(encode('Turbines spin; the turbine blade spins.', { avgDocLength: 7 }));
  });
});
