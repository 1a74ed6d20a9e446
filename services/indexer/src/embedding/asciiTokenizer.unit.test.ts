import { Tokenizer } from '@huggingface/tokenizers';
import { seededRandom } from '@memex/testing';
import { describe, expect, it, vi } from 'vitest';
import { AsciiTokenizer, type TokenizerDefinition } from './asciiTokenizer';
import { selectVocabulary } from './staticModel/build';
import { tokenizerJson } from './staticModel/tokenizer';

const WORDS = ['the', 'wing', 'slip', 'stream', 'slipstream', 'lift', '1990', '42', ',', '.', '-', '(', ')', "'", 'e', 'mail', 'cafe', 'σ', 'ς', 'οδος', '東', 'i̇', 'tower', 'naive'];
/** Pieces after the first, so that WordPiece's longest-prefix search has something to find (the static models' vocabularies have none). */
const PIECES = ['##s', '##ing', '##stream', '##er', '##1'];

function definition(pieces: readonly string[] = []): TokenizerDefinition & { model: { vocab: Record<string, number> } } {
  const json = JSON.parse(tokenizerJson({ words: WORDS, modelMaxLength: 512 })) as TokenizerDefinition & { model: { vocab: Record<string, number> } };
  let id = Object.keys(json.model.vocab).length;
  for (const piece of pieces) json.model.vocab[piece] = id++;
  return json;
}

function tokenizers(pieces: readonly string[] = [], wholeWords = false): { library: Tokenizer; fast: AsciiTokenizer } {
  const json = definition(pieces);
  const library = new Tokenizer(json, {});
  const fast = AsciiTokenizer.for(library, json, { wholeWords });
  if (!fast) throw new Error('no fast path for the static model kind of tokenizer');
  return { library, fast };
}

/** Text in fragments: known and unknown words in any case, pieces, punctuation, whitespace, and what the fast path hands the library. */
const FRAGMENTS = [
  'the', 'The', 'WING', 'wings', 'Slipstreaming', 'slipstreamer', 'lift1', '1990', 'x42', 'qzv', 'e-mail', "don't", '(lift)', 'stream.', ',', '.', '!', '~', '`', '^_^', '$5', '#', '##s',
  ' ', ' ', ' ', '  ', '\t', '\n', '\r\n',
  'café', 'CAFÉ', 'nai\u0308ve', '\u0301e', 'ΟΔΟΣ', 'οδοσ', 'İ', '東京tower', '😀', '\u00a0', '\u2003', '\u200b', '\ufffd', '\u0000', '\u0001', '\u000b', '\u007f', '\u0085',
  'a'.repeat(101), 'A'.repeat(100), `1990${'1'.repeat(97)}`, '[CLS]', '[cls]', '[UNK', 'SEP]',
];

function randomText(random: () => number): string {
  let text = '';
  const n = Math.floor(random() * 12);
  for (let i = 0; i < n; i++) text += FRAGMENTS[Math.floor(random() * FRAGMENTS.length)];
  return text;
}

describe('AsciiTokenizer', () => {
  it('gives the ids the library gives, over random text of every kind it covers and hands on', () => {
    const cases = [
      { pieces: [], wholeWords: false },
      { pieces: PIECES, wholeWords: false },
      // (a vocabulary of whole words, as the builder makes them: a word not found whole is unknown)
      { pieces: [], wholeWords: true },
    ];
    for (const { pieces, wholeWords } of cases) {
      const { library, fast } = tokenizers(pieces, wholeWords);
      const random = seededRandom(pieces.length + (wholeWords ? 2 : 1));
      let covered = 0;
      for (let trial = 0; trial < 4_000; trial++) {
        const text = randomText(random);
        const ids = fast.ids(text);
        if (ids) covered += 1;
        expect(ids ?? library.encode(text).ids, JSON.stringify(text)).toEqual(library.encode(text).ids);
      }
      // (only the texts holding [CLS] go to the library whole)
      expect(covered).toBeGreaterThan(3_000);
    }
  });

  it('follows WordPiece into pieces, and makes a word with no way through one unknown token', () => {
    const { library, fast } = tokenizers(PIECES);
    const id = (token: string) => library.token_to_id(token)!;
    expect(fast.ids('Slipstreaming wings')).toEqual([id('[CLS]'), id('slipstream'), id('##ing'), id('wing'), id('##s'), id('[SEP]')]);
    expect(fast.ids('wingx lift')).toEqual([id('[CLS]'), id('[UNK]'), id('lift'), id('[SEP]')]);
    // (a word of more than 100 characters is unknown, though its pieces are there)
    expect(fast.ids(`1990${'1'.repeat(96)}`)).toEqual([id('[CLS]'), id('1990'), ...Array<number>(96).fill(id('##1')), id('[SEP]')]);
    expect(fast.ids(`1990${'1'.repeat(97)}`)).toEqual([id('[CLS]'), id('[UNK]'), id('[SEP]')]);
  });

  it('knows the builder keeps no piece that continues a word, which wholeWords relies on', () => {
    expect(selectVocabulary(['wing', '##s', '##ing', '#', 's']).words).toEqual(['wing', '#', 's']);
    const { library, fast } = tokenizers([], true);
    const id = (token: string) => library.token_to_id(token)!;
    expect(fast.ids('wings slipstreamer')).toEqual([id('[CLS]'), id('[UNK]'), id('[UNK]'), id('[SEP]')]);
    // One look-up for an unknown word, not WordPiece's search through its prefixes.
    const unknown = [id('[CLS]'), id('[UNK]'), id('[SEP]')];
    const lookUps = vi.spyOn(library, 'token_to_id');
    expect(fast.ids('0f3a9c'.repeat(10))).toEqual(unknown);
    expect(lookUps).toHaveBeenCalledTimes(1);
  });

  it('leaves to the library a text holding an added token, and a stretch beyond ASCII', () => {
    const { library, fast } = tokenizers();
    expect(fast.ids('the [SEP] wing')).toBeUndefined();
    const id = (token: string) => library.token_to_id(token)!;
    expect(fast.ids('The CAFÉ\u00a0wing, lift')).toEqual([id('[CLS]'), id('the'), id('cafe'), id('wing'), id(','), id('lift'), id('[SEP]')]);
    expect(fast.ids('li\u0001ft\tWING')).toEqual([id('[CLS]'), id('lift'), id('wing'), id('[SEP]')]);
  });

  it('is not offered for a tokenizer of another kind', () => {
    const library = new Tokenizer(definition(), {});
    const other = (change: (json: ReturnType<typeof definition>) => void) => {
      const json = definition();
      change(json);
      return AsciiTokenizer.for(library, json);
    };
    expect(other(() => undefined)).toBeDefined();
    expect(other((json) => void (json.normalizer = { type: 'BertNormalizer', clean_text: true, lowercase: false }))).toBeUndefined();
    expect(other((json) => void (json.pre_tokenizer = { type: 'Whitespace' }))).toBeUndefined();
    expect(other((json) => void Object.assign(json.model, { type: 'BPE' }))).toBeUndefined();
    expect(other((json) => void (json.post_processor = { type: 'ByteLevel' }))).toBeUndefined();
    expect(other((json) => void (json.added_tokens = [{ content: 'wing', normalized: false }]))).toBeUndefined();
    expect(other((json) => void (json.added_tokens = [{ content: '[X]', normalized: true }]))).toBeUndefined();
  });
});
