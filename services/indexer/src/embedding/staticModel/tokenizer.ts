/**
 * Tokenizer files for the static word-vector model, in the Hugging Face `tokenizers` JSON
 * format that transformers.js reads: a WordPiece model over the word list (no "##" pieces, so
 * a word is either in the vocabulary as a whole or becomes [UNK]), a BERT normalizer
 * (clean text, CJK spacing, lowercase, strip accents) and the BERT pre-tokenizer (split on
 * whitespace; every punctuation character is its own token).
 *
 * A TemplateProcessing post-processor wraps every text in [CLS] ... [SEP]. Both special tokens
 * (like [PAD] and [UNK]) map to zero vectors, so they add nothing to a sum; in a mean they only
 * change the divisor, i.e. the scale, which L2 normalisation removes. Keeping them guarantees a
 * non-empty sequence for empty or whitespace-only texts (no zero-length tensors anywhere).
 *
 * This module also mirrors the normalizer and pre-tokenizer rules so the builder can drop
 * vocabulary entries the tokenizer can never produce (e.g. "e-mail", which is always split
 * into "e", "-", "mail").
 */

export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];
const CLS_ID = 2;
const SEP_ID = 3;
/** Id of the first ordinary word. */
export const FIRST_WORD_ID = SPECIAL_TOKENS.length;

/** WordPiece turns longer words into [UNK] without looking them up. */
const MAX_INPUT_CHARS_PER_WORD = 100;

// BERT's definition of punctuation: Unicode P* plus all non-alphanumeric printable ASCII.
const PUNCT = '\\p{P}\\u0021-\\u002F\\u003A-\\u0040\\u005B-\\u0060\\u007B-\\u007E';
const PRE_TOKEN_PATTERN = new RegExp(`[^\\s${PUNCT}]+|[${PUNCT}]`, 'gu');
const CONTROL = /^[\p{Cc}\p{Cf}\p{Co}\p{Cs}]$/u;
const WHITESPACE = /^\s$/u;
const COMBINING_MARKS = /\p{Mn}/gu;

/** CJK ideograph blocks that BERT surrounds with spaces (so each is a word on its own). */
function isCjkIdeograph(codePoint: number): boolean {
  return (
    (codePoint >= 0x4e00 && codePoint <= 0x9fff) ||
    (codePoint >= 0x3400 && codePoint <= 0x4dbf) ||
    (codePoint >= 0x20000 && codePoint <= 0x2a6df) ||
    (codePoint >= 0x2a700 && codePoint <= 0x2b73f) ||
    (codePoint >= 0x2b740 && codePoint <= 0x2b81f) ||
    (codePoint >= 0x2b820 && codePoint <= 0x2ceaf) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0x2f800 && codePoint <= 0x2fa1f)
  );
}

/** The BERT normalizer as configured in tokenizer.json (clean_text, CJK, lowercase, strip accents). */
export function bertNormalize(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0 || cp === 0xfffd) continue;
    if (ch !== '\t' && ch !== '\n' && ch !== '\r' && CONTROL.test(ch)) continue;
    if (WHITESPACE.test(ch)) out += ' ';
    else if (isCjkIdeograph(cp)) out += ` ${ch} `;
    else out += ch;
  }
  return out.toLowerCase().normalize('NFD').replace(COMBINING_MARKS, '');
}

/** The BERT pre-tokenizer: whitespace-separated runs, with each punctuation character split off. */
export function bertPreTokenize(text: string): string[] {
  return text.match(PRE_TOKEN_PATTERN) ?? [];
}

export type UnreachableReason = 'splits' | 'normalizes-differently' | 'too-long' | 'empty';

/**
 * Why the tokenizer can never emit `word` as a single token, or null if it can (the word is
 * its own normalised form and a single pre-token).
 */
export function unreachableReason(word: string): UnreachableReason | null {
  if (word.length === 0) return 'empty';
  if ([...word].length > MAX_INPUT_CHARS_PER_WORD) return 'too-long';
  const pieces = bertPreTokenize(bertNormalize(word));
  if (pieces.length === 1 && pieces[0] === word) return null;
  if (pieces.length === 1) return 'normalizes-differently';
  return 'splits';
}

interface TokenizerFileOptions {
  /** Ordinary words, in id order starting at FIRST_WORD_ID. */
  words: readonly string[];
  modelMaxLength: number;
}

/** tokenizer.json as a string. Written by hand so the vocabulary keeps id order (JS objects would hoist numeric keys). */
export function tokenizerJson(options: TokenizerFileOptions): string {
  const addedTokens = SPECIAL_TOKENS.map((content, id) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const special = (token: SpecialToken, id: number) => ({ id: token, ids: [id], tokens: [token] });
  const head = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: true, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': special('[CLS]', CLS_ID), '[SEP]': special('[SEP]', SEP_ID) },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  };
  const modelHead = {
    type: 'WordPiece',
    unk_token: '[UNK]',
    continuing_subword_prefix: '##',
    max_input_chars_per_word: MAX_INPUT_CHARS_PER_WORD,
  };
  const vocabEntries: string[] = [];
  SPECIAL_TOKENS.forEach((token, id) => vocabEntries.push(`${JSON.stringify(token)}:${id}`));
  options.words.forEach((word, i) => vocabEntries.push(`${JSON.stringify(word)}:${i + FIRST_WORD_ID}`));
  const headJson = JSON.stringify(head);
  const modelHeadJson = JSON.stringify(modelHead);
  return `${headJson.slice(0, -1)},"model":${modelHeadJson.slice(0, -1)},"vocab":{${vocabEntries.join(',')}}}}`;
}

export function tokenizerConfigJson(options: { modelMaxLength: number }): string {
  const config = {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    strip_accents: true,
    tokenize_chinese_chars: true,
    model_max_length: options.modelMaxLength,
    padding_side: 'right',
    truncation_side: 'right',
    clean_up_tokenization_spaces: true,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
