import { describe, it, expect } from 'vitest';
import { analyze, STOPWORDS, stem, tokenize, tokenizeWithOffsets } from './analyzer.js';

describe('tokenize', () => {
  it('lowercases and splits on anything that is not a letter or digit', () => {
    expect(tokenize('Hello, World! (test) #tag @user a_b')).toEqual([
      'hello', 'world', 'test', 'tag', 'user', 'a', 'b',
    ]);
  });

  it('splits hyphenated words', () => {
    expect(tokenize('state-of-the-art e-mail')).toEqual(['state', 'of', 'the', 'art', 'e', 'mail']);
  });

  it('drops a possessive or contracted "s" and removes other apostrophes', () => {
    expect(tokenize("Don't touch Ann's memo; it's O'Brien's. JOHN'S")).toEqual([
      'dont', 'touch', 'ann', 'memo', 'it', 'obrien', 'john',
    ]);
    expect(tokenize('don’t can’t')).toEqual(['dont', 'cant']);
    expect(tokenize("'quoted' words'")).toEqual(['quoted', 'words']);
  });

  it('folds accents and compatibility characters', () => {
    expect(tokenize('Café Naïve ÉCOLE Ｆｕｌｌ ﬁle Ångström')).toEqual([
      'cafe', 'naive', 'ecole', 'full', 'file', 'angstrom',
    ]);
    expect(tokenize('cafe\u0301')).toEqual(['cafe']);
  });

  it('keeps non-Latin scripts intact', () => {
    expect(tokenize('Привет мир Ελληνικά 한국어 텍스트')).toEqual([
      'привет', 'мир', 'ελληνικα', '한국어', '텍스트',
    ]);
  });

  it('keeps decimals and version numbers together, splits on commas', () => {
    expect(tokenize('pi=3.14, v1.2.3 and 1,000 items. End.')).toEqual([
      'pi', '3.14', 'v1.2.3', 'and', '1', '000', 'items', 'end',
    ]);
  });

  it('emits Han, Hiragana and Katakana characters one by one', () => {
    expect(tokenize('東京タワーとAI')).toEqual(['東', '京', 'タ', 'ワ', 'ー', 'と', 'ai']);
  });

  it('returns nothing for empty or punctuation-only text', () => {
    expect(tokenize('')).toEqual([]);
    expect(tokenize(' ... --- !!! ')).toEqual([]);
  });
});

describe('tokenizeWithOffsets', () => {
  it('reports the source word of every token', () => {
    const text = 'Le café d’Ann';
    const spans = tokenizeWithOffsets(text);
    expect(spans.map((s) => [s.token, text.slice(s.start, s.end)])).toEqual([
      ['le', 'Le'],
      ['cafe', 'café'],
      ['dann', 'd’Ann'],
    ]);
  });

  it('agrees with tokenize', () => {
    const text = "Mixed: naïve-ish 東京 it's 3.14 text";
    expect(tokenizeWithOffsets(text).map((t) => t.token)).toEqual(tokenize(text));
  });
});

describe('STOPWORDS', () => {
  it("is exactly Lucene's classic English stop set", () => {
    expect([...STOPWORDS].sort()).toEqual([
      'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is',
      'it', 'no', 'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there',
      'these', 'they', 'this', 'to', 'was', 'will', 'with',
    ]);
  });
});

describe('analyze', () => {
  it('tokenizes, drops stopwords and stems', () => {
    expect(analyze('The Running of the Memos is not connected to their databases')).toEqual([
      'run', 'memo', 'connect', 'databas',
    ]);
  });

  it('keeps numbers and one-character tokens', () => {
    expect(analyze('C and R in 2024: x = 7')).toEqual(['c', 'r', '2024', 'x', '7']);
  });

  it('matches inflected forms of the same word', () => {
    expect(analyze('searching indexed memos')).toEqual(analyze('search index memo'));
  });

  it('exposes the stemmer', () => {
    expect(stem('relational')).toBe('relat');
  });
});
