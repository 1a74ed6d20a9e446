import { describe, expect, it } from 'vitest';

import { selectVocabulary } from './staticModel/build.js';
import { bertNormalize, bertPreTokenize, tokenizerConfigJson, tokenizerJson, unreachableReason } from './staticModel/tokenizer.js';

describe('BERT normalisation mirror', () => {
  it('lower-cases, strips accents, maps whitespace to spaces and drops control characters', () => {
    expect(bertNormalize('Café\tNAÏVE\u0000x\u200by')).toBe('cafe naivexy');
  });

  it('surrounds CJK ideographs with spaces', () => {
    expect(bertPreTokenize(bertNormalize('東京tower'))).toEqual(['東', '京', 'tower']);
  });

  it('splits off every punctuation character', () => {
    expect(bertPreTokenize("don't stop, e-mail me!")).toEqual(['don', "'", 't', 'stop', ',', 'e', '-', 'mail', 'me', '!']);
    expect(bertPreTokenize('  ')).toEqual([]);
    expect(bertPreTokenize('£100 €')).toEqual(['£100', '€']); // currency signs are symbols, not punctuation
  });
});

describe('vocabulary reachability', () => {
  it('classifies words the tokenizer can and cannot produce', () => {
    expect(unreachableReason('hello')).toBeNull();
    expect(unreachableReason('1990')).toBeNull();
    expect(unreachableReason(',')).toBeNull();
    expect(unreachableReason('“')).toBeNull();
    expect(unreachableReason('e-mail')).toBe('splits');
    expect(unreachableReason("'s")).toBe('splits');
    expect(unreachableReason('new york')).toBe('splits');
    expect(unreachableReason('Hello')).toBe('normalizes-differently');
    expect(unreachableReason('café')).toBe('normalizes-differently');
    expect(unreachableReason('a'.repeat(101))).toBe('too-long');
    expect(unreachableReason('')).toBe('empty');
  });

  it('keeps reachable words in source order with their 1-based ranks', () => {
    const selection = selectVocabulary(['the', 'e-mail', ',', 'Paris', 'paris', '[UNK]', 'paris']);
    expect(selection.words).toEqual(['the', ',', 'paris']);
    expect(Array.from(selection.ranks)).toEqual([1, 3, 5]);
    expect(selection.dropped).toEqual({ splits: 2, 'normalizes-differently': 1, duplicate: 1 });
  });
});

describe('tokenizer files', () => {
  it('writes valid JSON with specials first and words in id order', () => {
    const text = tokenizerJson({ words: ['the', '1990', 'b"c'], modelMaxLength: 512 });
    const json = JSON.parse(text) as { model: { type: string; vocab: Record<string, number> }; post_processor: { type: string } };
    expect(json.model.type).toBe('WordPiece');
    expect(json.post_processor.type).toBe('TemplateProcessing');
    expect(json.model.vocab).toEqual({ '[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3, the: 4, '1990': 5, 'b"c': 6 });
    // Numeric-looking words keep their position in the file (a plain object would hoist them).
    expect(text.indexOf('"the":4')).toBeLessThan(text.indexOf('"1990":5'));
    const config = JSON.parse(tokenizerConfigJson({ modelMaxLength: 512 })) as Record<string, unknown>;
    expect(config).toMatchObject({ tokenizer_class: 'BertTokenizer', model_max_length: 512, pad_token: '[PAD]', unk_token: '[UNK]' });
  });
});
