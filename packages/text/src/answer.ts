import { analyze, STOPWORDS, stem, tokenize } from './analyzer.js';
import { FUNCTION_WORDS } from './function-words.js';
import { splitSentences } from './sentences.js';
import { idf } from './sparse.js';

/**
 * Distinct analyzed terms of a question without function words ("what", "how", "does"): those
 * rarely occur in the answer and would only dilute the score. Falls back to the plain analyzed
 * terms when the question consists of function words only.
 */
function questionTerms(query: string): string[] {
  const content = tokenize(query)
    .filter((t) => !STOPWORDS.has(t) && !FUNCTION_WORDS.has(t))
    .map(stem);
  return [...new Set(content.length > 0 ? content : analyze(query))];
}

export interface Passage {
  id: string;
  text: string;
}

export interface ScoredSentence {
  passageId: string;
  /** The sentence as it appears in the passage (trimmed). */
  text: string;
  /** UTF-16 offsets of the sentence within its passage's text. */
  start: number;
  end: number;
  /** Share of the query's IDF weight the sentence covers: 1 means every query term occurs. */
  score: number;
}

export interface ScoreSentencesOptions {
  /** Return at most this many sentences. */
  limit?: number;
}

/**
 * Sentences of `passages` that share analyzed terms with `query`, best first.
 *
 * Query terms are the analyzed terms of `query` minus function words ({@link FUNCTION_WORDS}).
 * score = Σ idf(t) over distinct query terms t in the sentence ÷ Σ idf(t) over all distinct
 * query terms, with BM25's idf counting in how many of the given passages t occurs; so it lies
 * in [0, 1] and rare query words matter more than common ones. Query terms found in no passage
 * still count in the denominator: a score of 1 means the sentence really covers the whole query.
 * Sentences scoring 0 are left out; an all-stopword query returns nothing. Ties keep passage
 * order, then sentence order, so callers can pass passages ranked by relevance.
 */
export function scoreSentences(
  query: string,
  passages: readonly Passage[],
  options?: ScoreSentencesOptions,
): ScoredSentence[] {
  const queryTerms = questionTerms(query);
  if (queryTerms.length === 0 || passages.length === 0) return [];

  const sentencesPerPassage = passages.map((p) =>
    splitSentences(p.text).map((s) => ({ span: s, terms: new Set(analyze(s.text)) })),
  );
  const weights = new Map<string, number>();
  for (const t of queryTerms) {
    let df = 0;
    for (const sentences of sentencesPerPassage) {
      if (sentences.some((s) => s.terms.has(t))) df++;
    }
    weights.set(t, idf(passages.length, df));
  }
  const totalWeight = queryTerms.reduce((acc, t) => acc + (weights.get(t) ?? 0), 0);

  const out: ScoredSentence[] = [];
  sentencesPerPassage.forEach((sentences, pi) => {
    const passageId = passages[pi]?.id ?? '';
    for (const { span, terms } of sentences) {
      let covered = 0;
      for (const t of queryTerms) if (terms.has(t)) covered += weights.get(t) ?? 0;
      if (covered <= 0) continue;
      const score = Math.min(1, covered / totalWeight);
      out.push({ passageId, text: span.text, start: span.start, end: span.end, score });
    }
  });
  // Array.prototype.sort is stable, so equal scores keep passage then sentence order.
  out.sort((a, b) => b.score - a.score);
  const limit = options?.limit;
  return limit === undefined ? out : out.slice(0, Math.max(0, Math.floor(limit)));
}

/**
 * True when `text` contains at least one of the query terms {@link scoreSentences} uses, so
 * "what is HNSW?" does not match a text merely because it contains "what".
 */
export function hasLexicalOverlap(query: string, text: string): boolean {
  const queryTerms = new Set(questionTerms(query));
  if (queryTerms.size === 0) return false;
  return analyze(text).some((t) => queryTerms.has(t));
}
