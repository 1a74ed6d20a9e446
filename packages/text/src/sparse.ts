import { analyze } from './analyzer.js';

/**
 * A sparse vector as Qdrant takes it: `indices` are unsigned 32-bit integers, strictly
 * ascending (hence unique), and `values[i]` belongs to `indices[i]`.
 */
export interface SparseVector {
  indices: number[];
  values: number[];
}

export interface EncodedDocument extends SparseVector {
  /** Document length dl: the number of analyzed terms (stopwords excluded, repeats counted). */
  length: number;
}

export interface Bm25Options {
  /** Term-frequency saturation; higher lets repeated terms keep adding weight. */
  k1?: number;
  /** Length normalisation strength, 0 (none) to 1 (full). */
  b?: number;
  /**
   * Average document length (in analyzed terms) of the collection. A fixed value keeps
   * already-indexed vectors valid as the collection grows; it only shifts how long a
   * document must be before it is penalised.
   */
  avgDocLength?: number;
}

export const DEFAULT_BM25_OPTIONS: Readonly<Required<Bm25Options>> = Object.freeze({
  k1: 0.9,
  b: 0.4,
  avgDocLength: 100,
});

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * Stable 32-bit id of an analyzed term: FNV-1a over its UTF-8 bytes. Ids are the same on every
 * platform and run, so vectors stored long ago still match new queries. Distinct terms may
 * collide: a vocabulary of ~93k distinct terms holds one colliding pair on average. A collision
 * merges two terms' postings, which costs a little precision and never loses a match.
 */
export function termId(term: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < term.length; i++) {
    let cp = term.charCodeAt(i);
    if (cp < 0x80) {
      h = Math.imul(h ^ cp, FNV_PRIME);
      continue;
    }
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < term.length) {
      const lo = term.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (cp < 0x800) {
      h = Math.imul(h ^ (0xc0 | (cp >> 6)), FNV_PRIME);
    } else {
      if (cp < 0x10000) {
        h = Math.imul(h ^ (0xe0 | (cp >> 12)), FNV_PRIME);
      } else {
        h = Math.imul(h ^ (0xf0 | (cp >> 18)), FNV_PRIME);
        h = Math.imul(h ^ (0x80 | ((cp >> 12) & 0x3f)), FNV_PRIME);
      }
      h = Math.imul(h ^ (0x80 | ((cp >> 6) & 0x3f)), FNV_PRIME);
    }
    h = Math.imul(h ^ (0x80 | (cp & 0x3f)), FNV_PRIME);
  }
  return h >>> 0;
}

/** Term frequencies keyed by term id (colliding terms add up), sorted by id. */
function countTerms(terms: readonly string[]): Array<[number, number]> {
  const counts = new Map<number, number>();
  for (const term of terms) {
    const id = termId(term);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => a[0] - b[0]);
}

function resolveBm25(options: Bm25Options | undefined): Required<Bm25Options> {
  const o = { ...DEFAULT_BM25_OPTIONS, ...options };
  if (!(o.k1 >= 0) || !Number.isFinite(o.k1)) throw new RangeError(`k1 must be >= 0, got ${o.k1}`);
  if (!(o.b >= 0 && o.b <= 1)) throw new RangeError(`b must be within [0, 1], got ${o.b}`);
  if (!(o.avgDocLength > 0) || !Number.isFinite(o.avgDocLength)) {
    throw new RangeError(`avgDocLength must be > 0, got ${o.avgDocLength}`);
  }
  return o;
}

/**
 * The document side of BM25 for one term: tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)).
 * Exported so an embedded index can score exactly like the vectors stored in Qdrant.
 */
export function bm25TermWeight(tf: number, docLength: number, options?: Bm25Options): number {
  const { k1, b, avgDocLength } = resolveBm25(options);
  return (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * docLength) / avgDocLength));
}

/**
 * Term frequencies of `text`: one entry per distinct analyzed term with its count, and `length`, the
 * number of analyzed terms. What an index that scores BM25 itself (with the live average length)
 * stores; {@link weighDocument} turns it into stored BM25 weights for an index that cannot.
 */
export function termFrequencies(text: string): EncodedDocument {
  const terms = analyze(text);
  const indices: number[] = [];
  const values: number[] = [];
  for (const [id, tf] of countTerms(terms)) {
    indices.push(id);
    values.push(tf);
  }
  return { indices, values, length: terms.length };
}

/**
 * BM25 document-side weights from term frequencies, with a fixed average document length: each
 * value becomes {@link bm25TermWeight}. IDF is deliberately absent: the collection applies it at
 * query time (Qdrant's `modifier: "idf"`), so stored vectors never go stale as frequencies change.
 */
export function weighDocument(frequencies: EncodedDocument, options?: Bm25Options): EncodedDocument {
  const { k1, b, avgDocLength } = resolveBm25(options);
  const norm = k1 * (1 - b + (b * frequencies.length) / avgDocLength);
  return {
    indices: [...frequencies.indices],
    values: frequencies.values.map((tf) => (tf * (k1 + 1)) / (tf + norm)),
    length: frequencies.length,
  };
}

/** BM25 document vector of `text`: {@link weighDocument} of its {@link termFrequencies}. */
export function encodeDocument(text: string, options?: Bm25Options): EncodedDocument {
  return weighDocument(termFrequencies(text), options);
}

/**
 * Query vector of `text`: each distinct analyzed term with its count in the query, so a term
 * the user repeats weighs proportionally more (the plain BM25 sum over query-term occurrences).
 * Dot product with a document vector, times IDF per term, gives the BM25 score.
 */
export function encodeQuery(text: string): SparseVector {
  const indices: number[] = [];
  const values: number[] = [];
  for (const [id, count] of countTerms(analyze(text))) {
    indices.push(id);
    values.push(count);
  }
  return { indices, values };
}

/**
 * BM25 inverse document frequency ln(1 + (n − df + 0.5)/(df + 0.5)), the variant Qdrant's
 * IDF modifier uses, so an embedded index ranks like Qdrant. Always > 0; `df` is clamped to
 * [0, n] so inconsistent counts cannot produce NaN.
 */
export function idf(n: number, df: number): number {
  const total = Math.max(0, n);
  const d = Math.min(Math.max(0, df), total);
  return Math.log(1 + (total - d + 0.5) / (d + 0.5));
}
