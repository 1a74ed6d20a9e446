import { MemexError, type IndexSearchReply, type IndexSearchRequest } from '@memex/contracts';
import { encodeQuery } from '@memex/text';
import type { SearchIndex } from '../searchIndex/port';
import type { ModelSet } from '../state/models';
import type { Reranker } from '../reranking/port';
import { rerankHits } from '../reranking/rerank';
import { fuseRankings } from './fusion';
import { boostTitles } from './titleBoost';

interface HybridSearchOptions {
  lexicalWeight: number;
  /** Candidates each ranking contributes before fusion. */
  candidates: number;
  /** The configured reranker, if any: requests rerank by default when there is one. */
  reranker?: Reranker;
  /** Fused candidates reranked when the request names none. */
  rerankCandidates?: number;
  /** SEARCH_TITLE_WEIGHT: how much query terms in a memo's title lift its chunks (see boostTitles); 0 = off. */
  titleWeight?: number;
}

/** Fused candidates the title boost re-orders (it can lift a chunk from below the requested limit). */
const TITLE_POOL = 50;

/**
 * `chunk_vector_search`: the query is embedded with the active model and analysed into BM25 terms;
 * both rankings run inside the project and the filters, then are fused (see `fuseRankings`).
 */
export async function hybridSearch(
  index: SearchIndex,
  models: ModelSet,
  request: IndexSearchRequest,
  options: HybridSearchOptions,
): Promise<IndexSearchReply> {
  const reranking = request.rerank?.enabled ?? options.reranker !== undefined;
  if (reranking && !options.reranker) throw new MemexError('InvalidRequest', 'rag_config.reranking.enabled is true but no reranker is configured (RERANKER)');
  // Reranking looks at a wider pool of fused candidates and keeps the best `rerank.topK` of them.
  const pool = reranking ? (request.candidates ?? Math.max(request.limit, options.rerankCandidates ?? 30)) : request.limit;
  const { model, embedder } = await models.active();
  const [vector] = await embedder.embed([request.query], 'query');
  const k = Math.max(pool, options.candidates);
  const query = { projectId: request.projectId, filters: request.filters, limit: k };
  // A query with no word the model knows has a zero vector: its dense ranking would be noise.
  const hasDense = vector !== undefined && vector.some((x) => x !== 0);
  const ranking = request.ranking ?? 'hybrid';
  // The dense ranking is asked first: the embedded index may scan on its scan thread meanwhile,
  // while BM25 runs here. Exact cosines matter for the hits returned; the other candidates only
  // fill the fusion.
  const denseRanking = hasDense && ranking !== 'lexical' ? index.searchDense(model, vector, { ...query, exactTop: pool }) : Promise.resolve([]);
  const lexicalRanking = ranking !== 'dense' ? index.searchSparse(model, encodeQuery(request.query), query) : Promise.resolve([]);
  const [lexical, dense] = await Promise.all([lexicalRanking, denseRanking]);
  const weight = ranking === 'lexical' || !hasDense ? 1 : ranking === 'dense' ? 0 : options.lexicalWeight;
  const titleWeight = ranking === 'hybrid' ? (options.titleWeight ?? 0) : 0;
  let hits = fuseRankings(lexical, dense, weight, titleWeight > 0 ? Math.max(pool, TITLE_POOL) : pool);
  if (titleWeight > 0) hits = boostTitles(hits, request.query, titleWeight).slice(0, pool);
  if (request.maxDistance !== undefined) hits = hits.filter((h) => h.distance <= request.maxDistance!);
  if (reranking) hits = await rerankHits(options.reranker!, request.query, hits, request.rerank?.topK ?? request.limit);
  return {
    model,
    hits: hits.map((h) => ({
      memoId: h.memoId,
      memoTitle: h.memoTitle,
      memoSummary: h.memoSummary,
      chunkId: h.chunkId,
      chunkIndex: h.chunkIndex,
      content: h.content,
      distance: h.distance,
      lexical: h.lexical,
      dense: h.dense,
    })),
  };
}
