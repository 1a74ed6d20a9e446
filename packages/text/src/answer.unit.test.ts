import { describe, it, expect } from 'vitest';
import { hasLexicalOverlap, scoreSentences } from './answer.js';

const PASSAGES = [
  {
    id: 'm1',
    text: 'Qdrant is a vector database. It stores embeddings in HNSW graphs. The team uses it daily.',
  },
  {
    id: 'm2',
    text: 'BM25 ranks documents by term frequency and inverse document frequency. Qdrant applies IDF at query time.',
  },
  { id: 'm3', text: 'Lunch was pasta. Nothing else happened.' },
];

describe('scoreSentences', () => {
  it('ranks sentences by IDF-weighted overlap with the question', () => {
    const ranked = scoreSentences('Where does Qdrant store embeddings?', PASSAGES);
    expect(ranked[0]).toMatchObject({ passageId: 'm1', text: 'It stores embeddings in HNSW graphs.' });
    expect(ranked.map((r) => r.passageId)).not.toContain('m3');
    for (let i = 1; i < ranked.length; i++) {
      expect(ranked[i]?.score ?? 0).toBeLessThanOrEqual(ranked[i - 1]?.score ?? 0);
    }
  });

  it('gives scores in (0, 1], with 1 for a sentence covering every query term', () => {
    const ranked = scoreSentences('How does BM25 rank documents?', PASSAGES);
    expect(ranked[0]?.text).toMatch(/^BM25 ranks documents/);
    expect(ranked[0]?.score).toBe(1);
    for (const r of ranked) {
      expect(r.score).toBeGreaterThan(0);
      expect(r.score).toBeLessThanOrEqual(1);
    }
  });

  it('weights rare terms above common ones', () => {
    // "qdrant" occurs in two passages, "hnsw" in one: the HNSW sentence must win.
    const ranked = scoreSentences('qdrant hnsw', PASSAGES);
    expect(ranked[0]?.text).toBe('It stores embeddings in HNSW graphs.');
    const qdrantOnly = ranked.find((r) => r.text === 'Qdrant is a vector database.');
    expect(qdrantOnly?.score).toBeLessThan(0.5);
  });

  it('returns offsets into the passage text', () => {
    for (const r of scoreSentences('qdrant idf query', PASSAGES)) {
      const passage = PASSAGES.find((p) => p.id === r.passageId);
      expect(passage?.text.slice(r.start, r.end)).toBe(r.text);
    }
  });

  it('keeps passage order on ties and honours limit', () => {
    const passages = [
      { id: 'b', text: 'Memo one.' },
      { id: 'a', text: 'Memo two.' },
    ];
    expect(scoreSentences('memo', passages).map((r) => r.passageId)).toEqual(['b', 'a']);
    expect(scoreSentences('memo', passages, { limit: 1 })).toHaveLength(1);
  });

  it('returns nothing without usable query terms or passages', () => {
    expect(scoreSentences('', PASSAGES)).toEqual([]);
    expect(scoreSentences('qdrant', [])).toEqual([]);
    expect(scoreSentences('unrelated words', PASSAGES)).toEqual([]);
  });

  it('falls back to plain analysis for a question made only of function words', () => {
    const ranked = scoreSentences('what else?', PASSAGES);
    expect(ranked[0]?.text).toBe('Nothing else happened.');
  });
});

describe('hasLexicalOverlap', () => {
  it('matches on shared stems', () => {
    expect(hasLexicalOverlap('indexing memos', 'The memo index is rebuilt nightly.')).toBe(true);
    expect(hasLexicalOverlap('Running', 'she runs')).toBe(true);
    expect(hasLexicalOverlap('running', 'we walked far')).toBe(false);
  });

  it('ignores stopwords and question words', () => {
    expect(hasLexicalOverlap('what is the answer', 'what is this thing')).toBe(false);
    expect(hasLexicalOverlap('the of and', 'the of and')).toBe(false);
    expect(hasLexicalOverlap('to be', 'not to be')).toBe(false);
  });

  it('matches numbers and accent-folded words', () => {
    expect(hasLexicalOverlap('version 3.14', 'Released 3.14 today')).toBe(true);
    expect(hasLexicalOverlap('café', 'A CAFE nearby')).toBe(true);
    expect(hasLexicalOverlap('', 'anything')).toBe(false);
  });
});
