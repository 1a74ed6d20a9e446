import { describe, it, expect } from 'vitest';
import * as text from './index.js';

describe('@memex/text', () => {
  it('exports its public functions and constants', () => {
    const functions = [
      'splitParagraphs', 'splitSentences', 'chunkText', 'analyze', 'stem', 'tokenize',
      'tokenizeWithOffsets', 'bm25TermWeight', 'encodeDocument', 'encodeQuery', 'idf', 'termId', 'termFrequencies', 'weighDocument',
      'fuseScores', 'minMaxNormalize', 'reciprocalRankFusion', 'summarize', 'collapseWhitespace',
      'truncateAtWord', 'extractKeyphrases', 'hasLexicalOverlap', 'scoreSentences',
    ];
    for (const name of functions) expect(typeof (text as Record<string, unknown>)[name]).toBe('function');
    expect(text.STOPWORDS.size).toBe(33);
    expect(text.FUNCTION_WORDS.has('because')).toBe(true);
    expect(text.DEFAULT_CHUNK_OPTIONS.maxChars).toBe(1500);
    expect(text.DEFAULT_BM25_OPTIONS).toEqual({ k1: 0.9, b: 0.4, avgDocLength: 100 });
    expect(text.DEFAULT_SUMMARIZE_OPTIONS.maxSentences).toBe(3);
    expect(text.DEFAULT_KEYPHRASE_OPTIONS.max).toBe(8);
  });

  it('keeps the defaults immutable', () => {
    expect(Object.isFrozen(text.DEFAULT_CHUNK_OPTIONS)).toBe(true);
    expect(Object.isFrozen(text.DEFAULT_BM25_OPTIONS)).toBe(true);
  });
});
