import { analyze } from './analyzer.js';
import { splitSentences } from './sentences.js';
import { collapseWhitespace, truncateAtWord } from './truncate.js';

export interface SummarizeOptions {
  /** Most sentences to include. */
  maxSentences?: number;
  /** Length cap of the whole summary in characters. */
  maxChars?: number;
  /** Length cap of each included sentence; longer ones are cut after a word, with "…". */
  maxSentenceChars?: number;
}

export const DEFAULT_SUMMARIZE_OPTIONS: Readonly<Required<SummarizeOptions>> = Object.freeze({
  maxSentences: 3,
  maxChars: 600,
  maxSentenceChars: 300,
});

// Only this many leading sentences compete: the graph is quadratic, and for long documents
// the opening part is where summaries usually come from anyway.
const MAX_CANDIDATES = 300;
const DAMPING = 0.85;
const MAX_ITERATIONS = 100;
const TOLERANCE = 1e-10;
// Earlier sentences get up to this much extra score: enough to break near-ties, too little to
// outvote the graph.
const POSITION_BONUS = 0.05;
// Fragments with fewer analyzed terms (headings, "Thanks!") are used only when nothing else is.
const MIN_TERMS = 3;

/** A sentence's unit-length TF-IDF vector: term ids in order of first use, and their weights. */
interface Vector {
  ids: Int32Array;
  weights: Float64Array;
}

/** Unit-length TF-IDF vectors, IDF computed over the document's own sentences. */
function sentenceVectors(termLists: readonly string[][]): { vectors: Vector[]; terms: number } {
  const idOf = new Map<string, number>();
  const lists = termLists.map((terms) => {
    const ids = new Int32Array(terms.length);
    for (let k = 0; k < terms.length; k++) {
      let id = idOf.get(terms[k]!);
      if (id === undefined) idOf.set(terms[k]!, (id = idOf.size));
      ids[k] = id;
    }
    return ids;
  });
  const terms = idOf.size;
  const df = new Int32Array(terms);
  // Per term, the last sentence it was counted in (df), then its count in the current one (tf).
  const seenIn = new Int32Array(terms).fill(-1);
  lists.forEach((ids, s) => {
    for (const id of ids) {
      if (seenIn[id] !== s) {
        seenIn[id] = s;
        df[id]! += 1;
      }
    }
  });
  const n = termLists.length;
  const tf = new Int32Array(terms);
  const vectors = lists.map((ids): Vector => {
    // Distinct ids in order of first use (the order the weights are summed in).
    const order: number[] = [];
    for (const id of ids) if (tf[id]!++ === 0) order.push(id);
    const weights = new Float64Array(order.length);
    let norm = 0;
    order.forEach((id, k) => {
      const w = (1 + Math.log(tf[id]!)) * Math.log(1 + n / (df[id] || 1));
      weights[k] = w;
      norm += w * w;
      tf[id] = 0;
    });
    norm = Math.sqrt(norm);
    if (norm > 0) for (let k = 0; k < weights.length; k++) weights[k] = weights[k]! / norm;
    return { ids: Int32Array.from(order), weights };
  });
  return { vectors, terms };
}

/**
 * Cosine of two unit vectors: the smaller one's terms in order against the larger one's weights,
 * spread over `scratch` (all zero, and left so).
 */
function cosine(a: Vector, b: Vector, scratch: Float64Array): number {
  const [small, large] = a.ids.length <= b.ids.length ? [a, b] : [b, a];
  for (let k = 0; k < large.ids.length; k++) scratch[large.ids[k]!] = large.weights[k]!;
  let dot = 0;
  for (let k = 0; k < small.ids.length; k++) {
    const w = scratch[small.ids[k]!]!;
    if (w !== 0) dot += small.weights[k]! * w;
  }
  for (let k = 0; k < large.ids.length; k++) scratch[large.ids[k]!] = 0;
  return dot;
}

/**
 * TextRank: PageRank over the sentence graph whose edge weights are cosine similarities.
 * Sentences with no edges spread their rank evenly, so the iteration always converges.
 */
function textRank({ vectors, terms }: { vectors: readonly Vector[]; terms: number }): number[] {
  const n = vectors.length;
  const scratch = new Float64Array(terms);
  const sim: number[][] = vectors.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = cosine(vectors[i]!, vectors[j]!, scratch);
      (sim[i] as number[])[j] = s;
      (sim[j] as number[])[i] = s;
    }
  }
  const outWeight = sim.map((row) => row.reduce((acc, x) => acc + x, 0));
  let rank = new Array<number>(n).fill(1 / n);
  for (let iter = 0; iter < MAX_ITERATIONS; iter++) {
    let dangling = 0;
    for (let j = 0; j < n; j++) if (!((outWeight[j] ?? 0) > 0)) dangling += rank[j] ?? 0;
    const next = new Array<number>(n);
    let delta = 0;
    for (let i = 0; i < n; i++) {
      let incoming = 0;
      for (let j = 0; j < n; j++) {
        const w = (sim[j] as number[])[i] ?? 0;
        if (w > 0) incoming += (w / (outWeight[j] as number)) * (rank[j] ?? 0);
      }
      const r = (1 - DAMPING) / n + DAMPING * (incoming + dangling / n);
      next[i] = r;
      delta += Math.abs(r - (rank[i] ?? 0));
    }
    rank = next;
    if (delta < TOLERANCE) break;
  }
  return rank;
}

/**
 * Extractive summary: the most central sentences (TextRank over TF-IDF cosine similarity,
 * earlier sentences winning near-ties), in their original order, joined by single spaces with
 * whitespace collapsed. A text of at most one sentence is returned whole (trimmed). Every
 * sentence is capped at `maxSentenceChars` and the summary at `maxChars`, cutting after a word
 * and marking the cut with "…".
 */
export function summarize(text: string, options?: SummarizeOptions): string {
  const o = { ...DEFAULT_SUMMARIZE_OPTIONS, ...options };
  const maxChars = Math.max(0, Math.floor(o.maxChars));
  const maxSentences = Math.max(0, Math.floor(o.maxSentences));
  const sentenceCap = Math.min(maxChars, Math.max(1, Math.floor(o.maxSentenceChars)));
  const sentences = splitSentences(text);
  if (sentences.length <= 1) return truncateAtWord(text.trim(), maxChars);
  if (maxSentences === 0) return '';

  const candidates = sentences.slice(0, MAX_CANDIDATES);
  const termLists = candidates.map((s) => analyze(s.text));
  const rank = textRank(sentenceVectors(termLists));
  const n = candidates.length;
  const order = candidates
    .map((s, i) => ({
      index: i,
      text: s.text,
      eligible: (termLists[i]?.length ?? 0) >= MIN_TERMS,
      score: (rank[i] ?? 0) * (1 + (POSITION_BONUS * (n - i)) / n),
    }))
    .sort(
      (a, b) =>
        Number(b.eligible) - Number(a.eligible) || b.score - a.score || a.index - b.index,
    );

  const chosen: { index: number; text: string }[] = [];
  let used = 0;
  for (const c of order) {
    if (chosen.length >= maxSentences) break;
    // A Markdown heading (as extracted documents keep them) reads as its words in a summary.
    const piece = truncateAtWord(collapseWhitespace(c.text).replace(/^#{1,6}\s+/, ''), sentenceCap);
    const cost = piece.length + (chosen.length > 0 ? 1 : 0);
    if (piece === '' || used + cost > maxChars) continue;
    chosen.push({ index: c.index, text: piece });
    used += cost;
  }
  return chosen
    .sort((a, b) => a.index - b.index)
    .map((c) => c.text)
    .join(' ');
}
