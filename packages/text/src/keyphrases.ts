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
// Between two words of one candidate phrase only spaces/tabs or a single hyphen may appear.
const JOINING_GAP = /^(?:[ \t\u00a0]+|[-‐‑])$/;

interface Candidate {
  stems: string[];
  weight: number;
  surfaces: Map<string, { count: number; first: number }>;
}

function isContiguousSub(inner: readonly string[], outer: readonly string[]): boolean {
  if (inner.length > outer.length) return false;
  for (let i = 0; i + inner.length <= outer.length; i++) {
    if (inner.every((s, j) => outer[i + j] === s)) return true;
  }
  return false;
}

/** `a` ends with what `b` starts with ("popular vector" / "vector databases"). */
function chains(a: readonly string[], b: readonly string[]): boolean {
  for (let len = 1; len < a.length && len < b.length; len++) {
    let same = true;
    for (let j = 0; j < len && same; j++) same = a[a.length - len + j] === b[j];
    if (same) return true;
  }
  return false;
}

/** Same words, or fragments of one longer run: reporting both would say the same thing twice. */
function redundant(a: readonly string[], b: readonly string[]): boolean {
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
  tokens.forEach((t, i) => {
    const prev = tokens[i - 1];
    // Tokens cut from one word (CJK characters) share its range and stay joined.
    const joined =
      prev !== undefined &&
      (prev.start === t.start || JOINING_GAP.test(text.slice(prev.end, t.start)));
    if (!joined && run.length > 0) {
      runs.push(run);
      run = [];
    }
    const content =
      t.token.length > 1 && HAS_LETTER.test(t.token) && !FUNCTION_WORDS.has(t.token);
    if (content) run.push(i);
    else if (run.length > 0) {
      runs.push(run);
      run = [];
    }
  });
  if (run.length > 0) runs.push(run);

  const stems = tokens.map((t) => stem(t.token));
  const positionWeight = (i: number): number => 1 + POSITION_BOOST * (1 - i / total);
  const candidates = new Map<string, Candidate>();
  for (const r of runs) {
    for (let a = 0; a < r.length; a++) {
      for (let len = 1; len <= MAX_WORDS && a + len <= r.length; len++) {
        const positions = r.slice(a, a + len);
        const phraseStems = positions.map((p) => stems[p] ?? '');
        const key = phraseStems.join(' ');
        const surface = positions.map((p) => tokens[p]?.token ?? '').join(' ');
        const first = positions[0] ?? 0;
        let c = candidates.get(key);
        if (!c) {
          c = { stems: phraseStems, weight: 0, surfaces: new Map() };
          candidates.set(key, c);
        }
        c.weight += positionWeight(first);
        const s = c.surfaces.get(surface);
        if (s) s.count++;
        else c.surfaces.set(surface, { count: 1, first });
      }
    }
  }

  const scored = [...candidates.values()].map((c) => {
    let support = 0;
    for (const s of c.stems) support += candidates.get(s)?.weight ?? 0;
    support /= c.stems.length;
    // Surfaces were recorded in order of first appearance: on equal counts the earliest wins.
    let best = '';
    let bestCount = 0;
    let firstSeen = Infinity;
    for (const [surface, { count, first }] of c.surfaces) {
      if (count > bestCount) {
        best = surface;
        bestCount = count;
      }
      firstSeen = Math.min(firstSeen, first);
    }
    const score = c.weight * (1 + LENGTH_BONUS * (c.stems.length - 1)) + WORD_SUPPORT * support;
    return { stems: c.stems, surface: best, score, firstSeen };
  });
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      a.firstSeen - b.firstSeen ||
      a.stems.length - b.stems.length ||
      (a.surface < b.surface ? -1 : a.surface > b.surface ? 1 : 0),
  );

  const chosen: typeof scored = [];
  for (const c of scored) {
    if (chosen.length >= max) break;
    if (!chosen.some((k) => redundant(c.stems, k.stems))) chosen.push(c);
  }
  return chosen.map((c) => c.surface);
}
