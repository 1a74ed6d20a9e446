import type { NatsConnection } from '@nats-io/nats-core';
import { Subjects, type Filter, type IndexSearchReply, type IndexSearchRequest, type IntermediateStep, type RagOptions } from '@memex/contracts';
import { query } from '@memex/runtime';
import type { Passage } from '../llm/port';

export interface RetrievalScope {
  projectId: string;
  filters: Filter[];
  requestId?: string;
  /** The request's rag_config: candidates, threshold and reranking for every search it makes. */
  rag?: RagOptions;
}

export interface RetrievalOptions {
  topK: number;
  /** Chunks farther than this are not context. */
  maxDistance: number;
}

/**
 * Searches the caller's project within the caller's filters (the scope is fixed here, on the server;
 * nothing a model or a memo says can change it) and numbers the chunks found from `firstNumber`.
 */
export class Retriever {
  constructor(
    private readonly nc: NatsConnection,
    private readonly options: RetrievalOptions,
  ) {}

  async search(scope: RetrievalScope, text: string, firstNumber: number): Promise<{ passages: Passage[]; step: IntermediateStep }> {
    const request = indexRequest(scope, text, this.options);
    const reply = await query<IndexSearchRequest, IndexSearchReply>(this.nc, Subjects.query.indexSearch, request, {
      timeoutMs: 15_000,
      ...(scope.requestId ? { requestId: scope.requestId } : {}),
    });
    // AGENT_MAX_DISTANCE is about fused distances; a request's own threshold replaces it.
    const maxDistance = scope.rag?.similarityThreshold !== undefined ? Infinity : this.options.maxDistance;
    const passages = reply.hits
      .filter((h) => h.distance <= maxDistance)
      .map((h, i) => ({
        n: firstNumber + i,
        memoId: h.memoId,
        memoTitle: h.memoTitle,
        chunkId: h.chunkId,
        content: h.content,
        distance: h.distance,
      }));
    return {
      passages,
      step: {
        tool: 'search_memos',
        input: { query: text, limit: request.rerank?.topK ?? request.limit },
        results: passages.map((p) => ({ memo_uuid: p.memoId, chunk_uuid: p.chunkId, distance: p.distance })),
      },
    };
  }
}

/**
 * rag_config → the index query: `vector_search.top_k` fused candidates (default AGENT_TOP_K), of
 * which reranking (on by default when the indexer has a reranker) keeps `reranking.top_k` (default
 * AGENT_TOP_K, at most the candidates); `similarity_threshold` drops candidates below it first.
 */
function indexRequest(scope: RetrievalScope, text: string, options: RetrievalOptions): IndexSearchRequest {
  const rag = scope.rag;
  const candidates = rag?.vectorTopK;
  const keep = Math.min(rag?.rerankTopK ?? options.topK, candidates ?? Infinity);
  return {
    projectId: scope.projectId,
    query: text,
    filters: scope.filters,
    limit: candidates ?? options.topK,
    ...(candidates !== undefined ? { candidates } : {}),
    ...(rag?.similarityThreshold !== undefined ? { maxDistance: 1 - rag.similarityThreshold } : {}),
    rerank: { ...(rag?.rerank !== undefined ? { enabled: rag.rerank } : {}), topK: keep },
  };
}
