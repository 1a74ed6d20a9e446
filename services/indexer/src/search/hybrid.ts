import type { IndexSearchReply, IndexSearchRequest } from '@memex/contracts';
import { encodeQuery } from '@memex/text';
import type { SearchIndex } from '../searchIndex/port';
import type { ModelSet } from '../state/models';
import { fuseRankings } from './fusion';

export interface HybridSearchOptions {
  lexicalWeight: number;
  /** Candidates each ranking contributes before fusion. */
  candidates: number;
}

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
  const { model, embedder } = await models.active();
  const [vector] = await embedder.embed([request.query], 'query');
  const k = Math.max(request.limit, options.candidates);
  const query = { projectId: request.projectId, filters: request.filters, limit: k };
  // A query with no word the model knows has a zero vector: its dense ranking would be noise.
  const hasDense = vector !== undefined && vector.some((x) => x !== 0);
  const ranking = request.ranking ?? 'hybrid';
  const [lexical, dense] = await Promise.all([
    ranking !== 'dense' ? index.searchSparse(model, encodeQuery(request.query), query) : Promise.resolve([]),
    hasDense && ranking !== 'lexical' ? index.searchDense(model, vector, query) : Promise.resolve([]),
  ]);
  const weight = ranking === 'lexical' || !hasDense ? 1 : ranking === 'dense' ? 0 : options.lexicalWeight;
  const hits = fuseRankings(lexical, dense, weight, request.limit);
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
