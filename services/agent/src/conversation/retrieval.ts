import type { NatsConnection } from '@nats-io/nats-core';
import { Subjects, type Filter, type IndexSearchReply, type IndexSearchRequest, type IntermediateStep } from '@memex/contracts';
import { query } from '@memex/runtime';
import type { Passage } from '../llm/port';

export interface RetrievalScope {
  projectId: string;
  filters: Filter[];
  requestId?: string;
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
    const request: IndexSearchRequest = { projectId: scope.projectId, query: text, filters: scope.filters, limit: this.options.topK };
    const reply = await query<IndexSearchRequest, IndexSearchReply>(this.nc, Subjects.query.indexSearch, request, {
      timeoutMs: 15_000,
      ...(scope.requestId ? { requestId: scope.requestId } : {}),
    });
    const passages = reply.hits
      .filter((h) => h.distance <= this.options.maxDistance)
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
        input: { query: text, limit: this.options.topK },
        results: passages.map((p) => ({ memo_uuid: p.memoId, chunk_uuid: p.chunkId, distance: p.distance })),
      },
    };
  }
}
