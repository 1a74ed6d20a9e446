import { stem } from './porter.js';

export { stem };

/** A token with the UTF-16 range of the source word it came from. */
export interface TokenSpan {
  token: string;
  start: number;
  end: number;
}

/**
 * Lucene's classic English stop set (33 words). Deliberately small: BM25's IDF already
 * discounts frequent words, and phrases such as "to be or not to be" keep some content.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it',
  'no', 'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these',
  'they', 'this', 'to', 'was', 'will', 'with',
]);

const WORD_CHAR = String.raw`[\p{L}\p{M}\p{N}]`;
const DIGIT_DOT_DIGIT = String.raw`(?<=\p{N})\.(?=\p{N})`;
// Letters, digits and combining marks; apostrophes join word parts ("don't"), and a period
// joins digits ("3.14", "v1.2.3") so decimals and versions stay one token.
const WORD = new RegExp(
  `${WORD_CHAR}+(?:['’ʼ]${WORD_CHAR}+|${DIGIT_DOT_DIGIT}${WORD_CHAR}+)*`,
  'gu',
);
const NORMALIZED_PART = new RegExp(`${WORD_CHAR}+(?:${DIGIT_DOT_DIGIT}${WORD_CHAR}+)*`, 'gu');
const COMBINING_DIACRITICS = /[\u0300-\u036f]/g;
const POSSESSIVE = /['’ʼ][sS]$/;
const APOSTROPHES = /['’ʼ]/g;
const NON_ASCII = /[^\t\n\r -~]/;
const CJK_CHARS = ['Han', 'Hiragana', 'Katakana']
  .map((script) => String.raw`\p{Script_Extensions=${script}}`)
  .join('');
const CJK = new RegExp(`[${CJK_CHARS}]`, 'u');
const CJK_OR_RUN = new RegExp(`[${CJK_CHARS}]|[^${CJK_CHARS}]+`, 'gu');

/** Whether a word is ASCII without an apostrophe: then lower-casing is all its normalizing. */
function plainAscii(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c >= 0x80 || c === 0x27) return false;
  }
  return true;
}

function normalizeWord(word: string, out: string[]): void {
  if (plainAscii(word)) {
    out.push(word.toLowerCase());
    return;
  }
  let w = word.replace(POSSESSIVE, '').replace(APOSTROPHES, '');
  if (!NON_ASCII.test(w)) {
    if (w !== '') out.push(w.toLowerCase());
    return;
  }
  // NFKD + dropping Latin combining diacritics folds accents ("café" → "cafe") and
  // compatibility forms ("ﬁ" → "fi", full-width letters); NFC then re-composes other scripts
  // (Hangul syllables) so only the accents are lost.
  w = w.normalize('NFKD').replace(COMBINING_DIACRITICS, '').normalize('NFC').toLowerCase();
  // Compatibility decomposition can introduce separators ("½" → "1⁄2"), hence the re-split.
  for (const part of w.match(NORMALIZED_PART) ?? []) {
    if (!CJK.test(part)) {
      out.push(part);
      continue;
    }
    // Chinese and Japanese are written without spaces: index them as single characters.
    for (const piece of part.match(CJK_OR_RUN) ?? []) out.push(piece);
  }
}

/**
 * Tokens with the offsets of their source words (several tokens may share one word's range,
 * e.g. CJK characters). See {@link tokenize} for the token rules.
 */
export function tokenizeWithOffsets(text: string): TokenSpan[] {
  const out: TokenSpan[] = [];
  const parts: string[] = [];
  WORD.lastIndex = 0;
  for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) {
    parts.length = 0;
    normalizeWord(m[0], parts);
    const start = m.index;
    const end = start + m[0].length;
    for (const token of parts) out.push({ token, start, end });
  }
  return out;
}

/**
 * Splits text into lowercase word tokens.
 *
 * - Words are runs of Unicode letters, digits and combining marks; everything else separates,
 *   so hyphenated words split ("state-of-the-art" → state, of, the, art).
 * - Accents are folded ("Café" → "cafe") and compatibility forms normalised (NFKD).
 * - Apostrophes: a trailing possessive/contraction "'s" is dropped ("memo's" → "memo",
 *   "it's" → "it"); other apostrophes are removed, joining the parts ("don't" → "dont",
 *   "O'Brien" → "obrien"). Straight, curly (’) and modifier (ʼ) apostrophes are equivalent.
 * - Digits joined by a period stay together ("3.14", "1.2.3"); commas split ("1,000" → 1, 000).
 * - Han, Hiragana and Katakana characters become one token each.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  WORD.lastIndex = 0;
  for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) normalizeWord(m[0], out);
  return out;
}

/**
 * The terms BM25 indexes and queries with: {@link tokenize}, minus {@link STOPWORDS}, then
 * {@link stem}. Numbers and one-character tokens are kept ("c", "r", CJK characters, "7").
 */
export function analyze(text: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    if (!STOPWORDS.has(token)) out.push(stem(token));
  }
  return out;
}
