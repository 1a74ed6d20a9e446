import { describe, expect, it } from 'vitest';
import { searchResponseJson, searchResultItem, type IndexSearchHit } from './queries';

const hits: IndexSearchHit[] = [
  {
    memoId: '0b6f3c8e-3f0a-5d57-9a51-7c1a2b3c4d5e',
    memoTitle: 'Quotes "inside", a back\\slash and a tab\t',
    memoSummary: 'Naïve café — 日本語, an emoji 🚀, a lone surrogate \ud800 and a control \u0001 character',
    chunkId: '5a1d2c3b-4e5f-5a6b-8c7d-9e0f1a2b3c4d',
    chunkIndex: 0,
    content: 'Line one\nline two\r\n</script> and \u2028 a line separator',
    distance: 0.123456789012345,
    lexical: 0.4,
    dense: 0.476543210987655,
  },
  { memoId: 'm2', memoTitle: '', memoSummary: '', chunkId: 'c2', chunkIndex: 3, content: '', distance: 1 },
  { memoId: 'm3', memoTitle: 't', memoSummary: 's', chunkId: 'c3', chunkIndex: 1, content: 'x', distance: 5e-324, lexical: 0, dense: 0 },
];

describe('searchResponseJson', () => {
  it('is byte for byte what JSON.stringify makes of the results, with or without scores, for any text', () => {
    const expected = JSON.stringify({ results: hits.map(searchResultItem) });
    expect(searchResponseJson(hits).toString('utf8')).toBe(expected);
    expect(searchResponseJson([]).toString('utf8')).toBe(JSON.stringify({ results: [] }));
  });

  it('takes each text as the given encoder encodes it (a cache of encoded texts)', () => {
    const asked: string[] = [];
    const encoded = searchResponseJson(hits.slice(0, 1), (text) => {
      asked.push(text);
      return Buffer.from(JSON.stringify(text));
    });
    expect(asked).toEqual([hits[0]!.content, hits[0]!.memoSummary]);
    expect(JSON.parse(encoded.toString('utf8'))).toEqual({ results: [searchResultItem(hits[0]!)] });
  });
});
