import type { ChunkCandidate } from '../searchIndex/port';
import { compareChunks } from '../searchIndex/topK';

export interface FusedHit extends ChunkCandidate {
  /** 1 − fused relevance, in [0, 1]; lower is closer. */
  distance: number;
  /** The relevance's two weighted parts (they add up to 1 − distance, before clamping). */
  lexical: number;
  dense: number;
}

/**
 * Fuses the lexical (BM25) and dense (cosine) rankings by score:
 *
 *   relevance = w · bm25 / max(bm25 over the candidates) + (1 − w) · max(0, cosine)
 *   distance  = 1 − relevance
 *
 * The lexical part is relative to the query's best lexical match (BM25 has no fixed scale), the dense
 * part absolute, so a chunk that only the dense ranking found scores at most 1 − w. Measured on
 * Cranfield and Vaswani (bench/quality.bench.ts), w = 0.85 beats BM25 alone on both, where min-max
 * fusion of both lists and reciprocal-rank fusion do less well with the small offline model.
 */
export function fuseRankings(
  lexical: readonly ChunkCandidate[],
  dense: readonly ChunkCandidate[],
  lexicalWeight: number,
  limit: number,
): FusedHit[] {
  const maxLexical = Math.max(0, ...lexical.map((c) => c.score));
  const lex = new Map(lexical.map((c) => [c.chunkId, maxLexical > 0 ? c.score / maxLexical : 0]));
  const den = new Map(dense.map((c) => [c.chunkId, Math.max(0, Math.min(1, c.score))]));
  const byId = new Map<string, ChunkCandidate>();
  for (const c of [...lexical, ...dense]) if (!byId.has(c.chunkId)) byId.set(c.chunkId, c);
  const fused: FusedHit[] = [];
  for (const [id, candidate] of byId) {
    const lexicalPart = lexicalWeight * (lex.get(id) ?? 0);
    const densePart = (1 - lexicalWeight) * (den.get(id) ?? 0);
    const relevance = lexicalPart + densePart;
    // Fields copied one by one: an object spread here took ~5 µs a hit (V8's generic clone path).
    fused.push({
      chunkId: candidate.chunkId,
      memoId: candidate.memoId,
      chunkIndex: candidate.chunkIndex,
      content: candidate.content,
      memoTitle: candidate.memoTitle,
      memoSummary: candidate.memoSummary,
      score: candidate.score,
      distance: Math.min(1, Math.max(0, 1 - relevance)),
      lexical: lexicalPart,
      dense: densePart,
    });
  }
  // Equal distances: memo uuid, then chunk index, as every index orders equal scores.
  fused.sort((a, b) => a.distance - b.distance || compareChunks(a, b));
  return fused.slice(0, limit);
}
