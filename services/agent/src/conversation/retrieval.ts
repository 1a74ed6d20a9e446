import type { NatsConnection } from '@nats-io/nats-core';
import { indexRequestFromRag, Subjects, type Filter, type IndexSearchReply, type IndexSearchRequest, type IntermediateStep, type RagOptions } from '@memex/contracts';
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

/** The index query for one search of a chat or generate: the caller's scope, rag_config's knobs. */
function indexRequest(scope: RetrievalScope, text: string, options: RetrievalOptions): IndexSearchRequest {
  return { projectId: scope.projectId, query: text, filters: scope.filters, ...indexRequestFromRag(scope.rag, { topK: options.topK }) };
}
