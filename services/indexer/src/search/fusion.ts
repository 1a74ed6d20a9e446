import type { ChunkCandidate } from '../searchIndex/port';
import { compareChunks, TopK } from '../searchIndex/topK';

interface FusedHit extends ChunkCandidate {
  /** 1 − fused relevance, in [0, 1]; lower is closer. */
  distance: number;
  /** The relevance's two weighted parts (they add up to 1 − distance, before clamping). */
  lexical: number;
  dense: number;
}

/** A candidate's two weighted parts while both rankings are folded in. */
interface Parts {
  candidate: ChunkCandidate;
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
 * part absolute, so a chunk that only the dense ranking found scores at most 1 − w. With the small
 * offline model this beats BM25 alone, min-max and reciprocal-rank fusion (docs/benchmarks.md).
 *
 * Only the best `limit` become hits: the others (most of the ~200 candidates) are scored in place,
 * never copied, and their titles and summaries never read.
 */
export function fuseRankings(
  lexical: readonly ChunkCandidate[],
  dense: readonly ChunkCandidate[],
  lexicalWeight: number,
  limit: number,
): FusedHit[] {
  let maxLexical = 0;
  for (const c of lexical) if (c.score > maxLexical) maxLexical = c.score;
  // Matched by the index's numeric keys when every candidate has one (cheaper to hash and compare
  // than ~200 string ids), else by chunk id.
  const keyed = lexical.every(hasKey) && dense.every(hasKey);
  const byId = new Map<number | string, Parts>();
  for (const c of lexical) {
    const id = keyed ? c.key! : c.chunkId;
    if (!byId.has(id)) byId.set(id, { candidate: c, lexical: lexicalWeight * (maxLexical > 0 ? c.score / maxLexical : 0), dense: 0 });
  }
  for (const c of dense) {
    const densePart = (1 - lexicalWeight) * Math.max(0, Math.min(1, c.score));
    const id = keyed ? c.key! : c.chunkId;
    const parts = byId.get(id);
    if (parts) parts.dense = densePart;
    else byId.set(id, { candidate: c, lexical: 0, dense: densePart });
  }
  // The lowest distance first; equal ones by memo uuid, then chunk index, as every index orders
  // equal scores.
  const best = new TopK<Parts>(limit, (a, b) => compareChunks(a.candidate, b.candidate));
  for (const parts of byId.values()) best.offer(-distanceOf(parts), parts);
  return best.sorted().map(({ item }) => ({
    // Fields copied one by one: an object spread here took ~5 µs a hit (V8's generic clone path).
    chunkId: item.candidate.chunkId,
    memoId: item.candidate.memoId,
    chunkIndex: item.candidate.chunkIndex,
    content: item.candidate.content,
    memoTitle: item.candidate.memoTitle,
    memoSummary: item.candidate.memoSummary,
    score: item.candidate.score,
    distance: distanceOf(item),
    lexical: item.lexical,
    dense: item.dense,
  }));
}

function hasKey(c: ChunkCandidate): boolean {
  return c.key !== undefined;
}

function distanceOf(parts: Parts): number {
  return Math.min(1, Math.max(0, 1 - (parts.lexical + parts.dense)));
}
