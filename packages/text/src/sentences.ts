/**
 * A piece of a larger string. `start`/`end` are UTF-16 offsets into the original string and
 * `text === original.slice(start, end)`; spans never begin or end with whitespace.
 */
export interface Span {
  text: string;
  start: number;
  end: number;
}

/** A sentence plus whether a section boundary precedes it; the chunker prefers to cut there. */
interface SentenceInfo extends Span {
  /** First sentence of a paragraph, of a heading-like line (heading, rule, code fence) or of the
   * text right after one. */
  blockStart: boolean;
}

// Same set as JavaScript's `\s` and String.prototype.trim, so spans agree with `text.trim()`.
export function isWhitespaceCode(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function trimmedSpan(text: string, start: number, end: number): Span | undefined {
  while (start < end && isWhitespaceCode(text.charCodeAt(start))) start++;
  while (end > start && isWhitespaceCode(text.charCodeAt(end - 1))) end--;
  return start < end ? { text: text.slice(start, end), start, end } : undefined;
}

// A blank line is a line holding only whitespace; U+2029 is Unicode's explicit paragraph separator.
const PARAGRAPH_BREAK = /\n[^\S\n]*\n|\u2029/g;

/** Paragraphs are separated by one or more blank lines. */
export function splitParagraphs(text: string): Span[] {
  const out: Span[] = [];
  let from = 0;
  PARAGRAPH_BREAK.lastIndex = 0;
  for (let m = PARAGRAPH_BREAK.exec(text); m !== null; m = PARAGRAPH_BREAK.exec(text)) {
    const span = trimmedSpan(text, from, m.index);
    if (span) out.push(span);
    from = m.index + m[0].length;
  }
  const last = trimmedSpan(text, from, text.length);
  if (last) out.push(last);
  return out;
}

/**
 * Sentences in document order, as trimmed spans of `text`.
 *
 * A sentence ends at `.`, `!`, `?` or `…` (runs of them, plus closing quotes and brackets) when
 * whitespace and then a capital letter, an uncased letter, a digit or an opening quote/bracket
 * follow; and right after CJK `。！？`. A period does not end a sentence after a known
 * abbreviation ("Dr.", "e.g.", "etc.", "vs.", "Fig.", "No. 5"), an uppercase initial ("J."), a
 * dotted abbreviation ("U.S.A."), or a list number at the start of a line; decimals, URLs and
 * e-mail addresses never split because no whitespace follows their periods. The price of these
 * rules: a sentence that really ends with an abbreviation or a capital initial ("… plan B.")
 * runs on into the next one.
 *
 * Paragraph breaks (blank lines) always end a sentence. A single newline does only before a
 * list item or table row, around headings, rules and code fences, and after a list item unless
 * the next line is indented (a continuation).
 */
export function splitSentences(text: string): Span[] {
  return sentenceInfos(text).map(({ text: t, start, end }) => ({ text: t, start, end }));
}

/** {@link splitSentences} with block-boundary information (internal to the package). */
export function sentenceInfos(text: string): SentenceInfo[] {
  return [...eachSentenceInfo(text)];
}

/** {@link sentenceInfos} one at a time, a paragraph's worth of work at most before each. */
export function* eachSentenceInfo(text: string): Generator<SentenceInfo, void, void> {
  for (const para of splitParagraphs(text)) {
    let firstInParagraph = true;
    for (const block of splitBlocks(text, para.start, para.end)) {
      let first = true;
      for (const s of splitBlock(text, block.start, block.end)) {
        yield { ...s, blockStart: first && (firstInParagraph || block.strong) };
        first = false;
        firstInParagraph = false;
      }
    }
  }
}

const HEADING = /^#{1,6}(?:\s|$)/;
const RULE = /^([-*_=])(?:[ \t]*\1){2,}[ \t]*$/;
const FENCE = /^(?:```|~~~)/;
const LIST_ITEM = /^(?:[-*+•‣◦▪▸]|\d{1,3}[.)]|[a-z][.)]|[A-Z]\)|\(\w{1,3}\))\s+\S/;
const TABLE_ROW = /^\|/;
const INDENTED = /^(?: {2,}|\t)/;

type LineKind = 'text' | 'list' | 'heading';

function classifyLine(line: string): LineKind {
  const t = line.trimStart();
  if (HEADING.test(t) || RULE.test(t) || FENCE.test(t)) return 'heading';
  if (LIST_ITEM.test(t) || TABLE_ROW.test(t)) return 'list';
  return 'text';
}

interface Block {
  start: number;
  end: number;
  /** Starts at a heading-like line (a section boundary rather than just a new list item). */
  strong: boolean;
}

/** Groups the lines of one paragraph into blocks that sentences may not cross. */
function splitBlocks(text: string, start: number, end: number): Block[] {
  const blocks: Block[] = [];
  let blockStart = start;
  let blockIsList = false;
  let blockStrong = false;
  let prevKind: LineKind | undefined;
  let lineStart = start;
  while (lineStart < end) {
    const nl = text.indexOf('\n', lineStart);
    const lineEnd = nl === -1 || nl >= end ? end : nl;
    const line = text.slice(lineStart, lineEnd);
    const kind = classifyLine(line);
    if (prevKind === undefined) {
      blockIsList = kind === 'list';
      blockStrong = kind === 'heading';
    } else if (
      kind !== 'text' ||
      prevKind === 'heading' ||
      (blockIsList && !INDENTED.test(line))
    ) {
      blocks.push({ start: blockStart, end: lineStart, strong: blockStrong });
      blockStart = lineStart;
      blockIsList = kind === 'list';
      blockStrong = kind === 'heading' || prevKind === 'heading';
    }
    prevKind = kind;
    lineStart = lineEnd + 1;
  }
  blocks.push({ start: blockStart, end, strong: blockStrong });
  return blocks;
}

const TERMINATORS = new Set(['.', '!', '?', '…', '‽', '؟', '۔', '।', '॥']);
// These end a sentence even without following whitespace: CJK text has no spaces.
const CJK_TERMINATORS = new Set(['。', '！', '？', '｡', '．']);
const CLOSERS = new Set([
  '"', "'", '”', '’', '»', '›', ')', ']', '}', '」', '』', '）', '】', '〕', '》', '〉', '］',
]);
const OPENERS = /^["'“‘«‹„([{]+/;
const SENTENCE_START = /^[\p{Lu}\p{Lt}\p{Lo}\p{N}"'“‘«„([¿¡*_`]/u;

// Lowercase, without the final period. Kept to forms that are rarely a sentence's last word.
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'mx', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'messrs', 'mme', 'mlle',
  'gen', 'col', 'lt', 'sgt', 'capt', 'cmdr', 'adm', 'gov', 'sen', 'rep', 'rev', 'hon', 'fr',
  'vs', 'etc', 'cf', 'al', 'approx', 'dept', 'est', 'fig', 'figs', 'eq', 'eqs', 'vol', 'vols',
  'ch', 'chap', 'sec', 'pp', 'ave', 'blvd', 'jan', 'feb', 'apr',
  'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'viz', 'ibid', 'resp', 'incl',
  'e.g', 'i.e', 'a.m', 'p.m', 'u.s', 'u.k', 'ph.d',
]);
// Words that are abbreviations only before a number ("No. 5", but "I said no. Then …").
const NUMBER_ABBREVIATIONS = new Set(['no', 'nos', 'nr', 'art', 'op', 'tab']);
const DOTTED = /^(?:\p{L}{1,3}\.)+\p{L}{1,2}$/u;
const LIST_MARKER_TOKEN = /^(?:\d{1,3}|[a-zA-Z]|[ivx]{1,4}|[IVX]{1,4})$/;
const UPPER_INITIAL = /^\p{Lu}$/u;
const DIGIT = /^\p{N}/u;

/** True when the single period at `dot` belongs to an abbreviation, initial or list marker. */
function isNonTerminalPeriod(text: string, blockStart: number, dot: number, next: number): boolean {
  let tokStart = dot;
  while (tokStart > blockStart && !isWhitespaceCode(text.charCodeAt(tokStart - 1))) tokStart--;
  const raw = text.slice(tokStart, dot);
  const token = raw.replace(OPENERS, '');
  if (token === '') return false;
  const lower = token.toLowerCase();
  if (ABBREVIATIONS.has(lower) || DOTTED.test(token) || UPPER_INITIAL.test(token)) return true;
  if (NUMBER_ABBREVIATIONS.has(lower) && DIGIT.test(text.slice(next, next + 2))) return true;
  let firstNonSpace = blockStart;
  while (firstNonSpace < dot && isWhitespaceCode(text.charCodeAt(firstNonSpace))) firstNonSpace++;
  return tokStart === firstNonSpace && LIST_MARKER_TOKEN.test(token);
}

function splitBlock(text: string, start: number, end: number): Span[] {
  const out: Span[] = [];
  const emit = (a: number, b: number): void => {
    const s = trimmedSpan(text, a, b);
    if (s) out.push(s);
  };
  let sentenceStart = start;
  let i = start;
  while (i < end) {
    const code = text.charCodeAt(i);
    // Below U+0080 only `.`, `!` and `?` end anything (the sets' other members are beyond ASCII).
    if (code < 0x80 && code !== 0x2e && code !== 0x21 && code !== 0x3f) {
      i++;
      continue;
    }
    const ch = text.charAt(i);
    if (CJK_TERMINATORS.has(ch)) {
      let j = i + 1;
      while (j < end && (CJK_TERMINATORS.has(text.charAt(j)) || CLOSERS.has(text.charAt(j)))) j++;
      emit(sentenceStart, j);
      sentenceStart = j;
      i = j;
      continue;
    }
    if (!TERMINATORS.has(ch)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < end && TERMINATORS.has(text.charAt(j))) j++;
    const singlePeriod = ch === '.' && j === i + 1;
    const runEnd = j;
    while (j < end && CLOSERS.has(text.charAt(j))) j++;
    // Decimals, URLs, e-mail addresses and "?!" inside tokens: no whitespace after the mark.
    if (j < end && !isWhitespaceCode(text.charCodeAt(j))) {
      i = runEnd;
      continue;
    }
    let k = j;
    while (k < end && isWhitespaceCode(text.charCodeAt(k))) k++;
    if (k >= end) break;
    const next = String.fromCodePoint(text.codePointAt(k) ?? 0);
    if (!SENTENCE_START.test(next) || (singlePeriod && isNonTerminalPeriod(text, start, i, k))) {
      i = k;
      continue;
    }
    emit(sentenceStart, j);
    sentenceStart = k;
    i = k;
  }
  emit(sentenceStart, end);
  return out;
}
