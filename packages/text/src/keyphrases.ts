import { stem, tokenizeWithOffsets } from './analyzer.js';
import { FUNCTION_WORDS } from './function-words.js';

export interface KeyphraseOptions {
  /** Most phrases to return. */
  max?: number;
}

export const DEFAULT_KEYPHRASE_OPTIONS: Readonly<Required<KeyphraseOptions>> = Object.freeze({
  max: 8,
});

const MAX_WORDS = 3;
// Earlier mentions weigh up to this much more (titles and opening sentences name the topic).
const POSITION_BOOST = 0.5;
// Each extra word multiplies a phrase's frequency score by this much more: a repeated
// two-word phrase says more than either word alone.
const LENGTH_BONUS = 0.5;
// Share of the phrase's words' own frequency added in, so a phrase made of recurring words
// beats a one-off combination of rare ones.
const WORD_SUPPORT = 0.25;
const HAS_LETTER = /\p{L}/u;

/** Whether `text[from, to)` may join two words of one phrase: only spaces and tabs, or a single hyphen. */
function joiningGap(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  if (to - from === 1) {
    const c = text.charCodeAt(from);
    if (c === 0x2d || c === 0x2010 || c === 0x2011) return true;
  }
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0xa0) return false;
  }
  return true;
}

/** A phrase by the ids of its words' stems, with the word sequences (surfaces) it was seen as. */
interface Candidate {
  stems: number[];
  weight: number;
  /** In order of first appearance; `first` is the token position of that appearance. */
  surfaces: { words: number[]; count: number; first: number }[];
}

/** A node of the trie of candidates: the phrase that ends here, and the phrases one word longer. */
interface PhraseNode {
  candidate?: Candidate;
  next?: Map<number, PhraseNode>;
}

/**
 * `items` in `compare`'s order (negative: the first argument comes first), one at a time from a
 * binary heap: O(n) before the first, O(log n) for each next. Reorders `items`.
 */
function* inOrder<T>(items: T[], compare: (a: T, b: T) => number): Generator<T, void, void> {
  const down = (from: number, size: number): void => {
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) return;
      const right = left + 1;
      const child = right < size && compare(items[right]!, items[left]!) < 0 ? right : left;
      if (compare(items[child]!, items[i]!) >= 0) return;
      [items[i], items[child]] = [items[child]!, items[i]!];
      i = child;
    }
  };
  for (let i = (items.length >> 1) - 1; i >= 0; i--) down(i, items.length);
  for (let size = items.length; size > 0; size--) {
    yield items[0]!;
    items[0] = items[size - 1]!;
    down(0, size - 1);
  }
}

/** Whether `words` is `run[from, from + len)`. */
function sameWords(words: readonly number[], run: readonly number[], from: number, len: number): boolean {
  for (let j = 0; j < len; j++) if (words[j] !== run[from + j]) return false;
  return true;
}

function isContiguousSub(inner: readonly number[], outer: readonly number[]): boolean {
  if (inner.length > outer.length) return false;
  for (let i = 0; i + inner.length <= outer.length; i++) {
    if (inner.every((s, j) => outer[i + j] === s)) return true;
  }
  return false;
}

/** `a` ends with what `b` starts with ("popular vector" / "vector databases"). */
function chains(a: readonly number[], b: readonly number[]): boolean {
  for (let len = 1; len < a.length && len < b.length; len++) {
    let same = true;
    for (let j = 0; j < len && same; j++) same = a[a.length - len + j] === b[j];
    if (same) return true;
  }
  return false;
}

/** Same words, or fragments of one longer run: reporting both would say the same thing twice. */
function redundant(a: readonly number[], b: readonly number[]): boolean {
  return isContiguousSub(a, b) || isContiguousSub(b, a) || chains(a, b) || chains(b, a);
}

/**
 * Top keyphrases of `text`, best first: lowercase, accent-folded, 1–3 words.
 *
 * Candidates are the word runs left after splitting at punctuation, line breaks, stopwords
 * ({@link FUNCTION_WORDS}), numbers and one-letter words (as in RAKE), and every 1–3 word
 * sub-run of them. Phrases are identified by their Porter stems, so "memo" and "memos" are one
 * phrase, shown in its most frequent surface form. Score = position-weighted frequency
 * (a mention at the start counts 1.5, at the end 1.0) × (1 + 0.5 per extra word), plus a
 * quarter of the mean position-weighted frequency of its words. A phrase that contains, is
 * contained in, or overlaps the end of a better-scoring selected phrase is skipped, so neither
 * "vector" nor "databases store" appears next to "vector databases". Ties go to the phrase
 * seen first.
 */
export function extractKeyphrases(text: string, options?: KeyphraseOptions): string[] {
  const max = Math.max(0, Math.floor(options?.max ?? DEFAULT_KEYPHRASE_OPTIONS.max));
  const tokens = tokenizeWithOffsets(text);
  const total = tokens.length;
  if (max === 0 || total === 0) return [];

  // Runs of content words (token positions) not interrupted by delimiters.
  const runs: number[][] = [];
  let run: number[] = [];
  for (let i = 0; i < total; i++) {
    const t = tokens[i]!;
    const prev = i > 0 ? tokens[i - 1]! : undefined;
    // Tokens cut from one word (CJK characters) share its range and stay joined.
    const joined = prev !== undefined && (prev.start === t.start || joiningGap(text, prev.end, t.start));
    if (!joined && run.length > 0) {
      runs.push(run);
      run = [];
    }
    const content = t.token.length > 1 && HAS_LETTER.test(t.token) && !FUNCTION_WORDS.has(t.token);
    if (content) run.push(i);
    else if (run.length > 0) {
      runs.push(run);
      run = [];
    }
  }
  if (run.length > 0) runs.push(run);

  // Stems and words as ids, so that a phrase is found by ids, a word at a time, without joining strings.
  const stemIds = new Map<string, number>();
  const wordIds = new Map<string, number>();
  const words: string[] = [];
  const stemId = (token: string): number => {
    const value = stem(token);
    let id = stemIds.get(value);
    if (id === undefined) stemIds.set(value, (id = stemIds.size));
    return id;
  };
  const wordId = (word: string): number => {
    let id = wordIds.get(word);
    if (id === undefined) wordIds.set(word, (id = words.push(word) - 1));
    return id;
  };
  // Candidates in order of first appearance, and a trie over their stem ids to find them by.
  const candidates: Candidate[] = [];
  const root = new Map<number, PhraseNode>();
  for (const r of runs) {
    const stems = r.map((p) => stemId(tokens[p]!.token));
    const surfaces = r.map((p) => wordId(tokens[p]!.token));
    for (let a = 0; a < r.length; a++) {
      const first = r[a]!;
      const weight = 1 + POSITION_BOOST * (1 - first / total);
      let level = root;
      for (let len = 1; len <= MAX_WORDS && a + len <= r.length; len++) {
        const id = stems[a + len - 1]!;
        let node = level.get(id);
        if (!node) level.set(id, (node = {}));
        // (a phrase of MAX_WORDS words has no longer ones to lead to)
        if (len < MAX_WORDS && a + len < r.length) level = node.next ??= new Map();
        let c = node.candidate;
        if (!c) {
          c = { stems: stems.slice(a, a + len), weight: 0, surfaces: [] };
          node.candidate = c;
          candidates.push(c);
        }
        c.weight += weight;
        const seen = c.surfaces.find((s) => sameWords(s.words, surfaces, a, len));
        if (seen) seen.count++;
        else c.surfaces.push({ words: surfaces.slice(a, a + len), count: 1, first });
      }
    }
  }

  const scored = candidates.map((c) => {
    let support = 0;
    for (const s of c.stems) support += root.get(s)?.candidate?.weight ?? 0;
    support /= c.stems.length;
    // Surfaces were recorded in order of first appearance: on equal counts the earliest wins.
    let best: number[] = [];
    let bestCount = 0;
    let firstSeen = Infinity;
    for (const { words: surface, count, first } of c.surfaces) {
      if (count > bestCount) {
        best = surface;
        bestCount = count;
      }
      firstSeen = Math.min(firstSeen, first);
    }
    const score = c.weight * (1 + LENGTH_BONUS * (c.stems.length - 1)) + WORD_SUPPORT * support;
    return { stems: c.stems, surface: best, score, firstSeen };
  });
  // Best first. No two candidates tie: the same first position and length make the same phrase.
  // So taking them from a heap one at a time gives a sort's order, for the few that are read.
  const chosen: typeof scored = [];
  for (const c of inOrder(scored, (a, b) => b.score - a.score || a.firstSeen - b.firstSeen || a.stems.length - b.stems.length)) {
    if (chosen.length >= max) break;
    if (!chosen.some((k) => redundant(c.stems, k.stems))) chosen.push(c);
  }
  return chosen.map((c) => c.surface.map((w) => words[w]).join(' '));
}
