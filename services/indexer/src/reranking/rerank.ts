import type { Reranker } from './port';

export interface Candidate {
  content: string;
  memoTitle: string;
  distance: number;
}

/**
 * Re-orders fused candidates by the reranker's relevance and keeps `topK`. The reranker sees the
 * memo title beside the chunk (titles carry much of a memo's topic). A hit's `distance` becomes
 * 1 − relevance, so it still reads "lower is closer"; ties keep the fused order.
 */
export async function rerankHits<T extends Candidate>(reranker: Reranker, query: string, hits: readonly T[], topK: number): Promise<T[]> {
  if (hits.length === 0) return [];
  const scores = await reranker.score(
    query,
    hits.map((h) => (h.memoTitle ? `${h.memoTitle}\n${h.content}` : h.content)),
  );
  return hits
    .map((hit, i) => ({ hit, score: scores[i]!, i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, topK)
    .map(({ hit, score }) => ({ ...hit, distance: 1 - score }));
}
