import type { RagOptions, References } from './http/ragConfig';
import type { Filter } from './filters';
import type { ChatListInput } from './http/validation';
import type { Chat, ChatListResponse, Citation, IntermediateStep } from './http/chat';
import type { ResummarizeResponse } from './http/resummarize';
import type { Memo } from './http/memo';
import type { MemoHistoryResponse, MemoListInput, MemoListResponse, MemoStatusResponse } from './http/catalog';
import type { MemoEventMessage, MemoFile } from './events';
import type { SearchResultItem } from './http/search';
import type { MemoRef } from './commands';
import type { WireError } from './errors';
import type { ContentRef } from './blobs';
import type { ChunkLayout } from './events';

/** Every query reply: a value, or a typed error. */
export type QueryReply<T> = { ok: true; value: T } | { ok: false; error: WireError };

export interface MemoGetRequest {
  projectId: string;
  ref: MemoRef;
  /** The caller's knowledge space: a memo outside these filters is not found. Absent or empty: the project. */
  space?: Filter[];
}
/**
 * GET's reply from the memo service: the memo without its content, which the gateway reads from
 * the blob store by `content_ref` (a reply never carries content: it could exceed `max_payload`).
 */
export type MemoView = Omit<Memo, 'content' | 'chunks'> & {
  content_ref: ContentRef;
  /** Chunks of `chunk_revision` (ids derive from memo, revision and index). */
  chunk_revision: number;
  chunk_layout: ChunkLayout;
  /** Text of chunk 0 ('' until chunked), for title search. */
  first_chunk: string;
};
export type MemoGetReply = MemoView;

export type MemoResolveRequest = MemoGetRequest;
export interface MemoResolveReply {
  memoId: string;
  ownerProjectId: string;
}

export interface MemoListRequest extends MemoListInput {
  projectId: string;
}
/** The list as the memo service answers it; the gateway adds the page links, as only it knows the request's URL. */
export type MemoListReply = Omit<MemoListResponse, 'next' | 'previous'>;

/** Status, history and file look-ups address a memo as GET does; another project's memo is not found. */
export interface MemoAddressRequest {
  projectId: string;
  ref: MemoRef;
  /** As on MemoGetRequest. */
  space?: Filter[];
}
export type MemoStatusReply = MemoStatusResponse;
export type MemoHistoryReply = MemoHistoryResponse;
export interface MemoFileReply {
  memoId: string;
  file: MemoFile;
}

/** A page of the memo event log after `after` (a position; 0 from the start). */
export interface MemoLogRequest {
  after: number;
  /** At most this many events; fewer when the reply would grow past half of `max_payload`. */
  limit: number;
}
/**
 * Events as the bus carries them (sealed; tombstones plain), each with its position in the log.
 * `head`: the highest position when the page was read. An empty page: the replay is done.
 */
export interface MemoLogReply {
  events: { position: number; message: MemoEventMessage }[];
  head: number;
}

export interface TitleSearchRequest {
  projectId: string;
  mode: 'contains' | 'startswith';
  query: string;
  filters: Filter[];
  limit: number;
}
export type TitleSearchReply = SearchResultItem[];

export interface IndexSearchRequest {
  projectId: string;
  query: string;
  filters: Filter[];
  limit: number;
  /**
   * Diagnostics and benchmarks only (the HTTP API always fuses): one ranking alone, with
   * distance = 1 − bm25/max (lexical) or 1 − cosine (dense).
   */
  ranking?: 'hybrid' | 'lexical' | 'dense';
  /** Fused candidates considered for reranking (default: the indexer's RERANKER_CANDIDATES, at least `limit`). */
  candidates?: number;
  /** Fused candidates farther than this are dropped before reranking (rag_config's similarity_threshold as 1 − it). */
  maxDistance?: number;
  /**
   * Reranking of the fused candidates: `enabled` defaults to whether the indexer has a reranker;
   * `enabled: true` without one is an error. `topK` hits are kept after it (default: all `limit`).
   */
  rerank?: { enabled?: boolean; topK?: number };
  /**
   * `search-response`: the reply's value is the HTTP API's search response itself (`{ results }`,
   * each hit as `searchResultItem` maps it), which the gateway sends on as it came, never decoding
   * it. Without it, an `IndexSearchReply` (what the agent reads).
   */
  format?: 'search-response';
}

export interface IndexSearchHit {
  memoId: string;
  memoTitle: string;
  memoSummary: string;
  chunkId: string;
  chunkIndex: number;
  content: string;
  /** 1 − fused relevance; lower is closer. */
  distance: number;
  /** The weighted lexical and dense parts of the relevance (absent from indexers that predate them). */
  lexical?: number;
  dense?: number;
}
export interface IndexSearchReply {
  model: string;
  hits: IndexSearchHit[];
}

/** A hit as the HTTP API's search results show it. */
export function searchResultItem(hit: IndexSearchHit): SearchResultItem {
  return {
    memo_title: hit.memoTitle,
    memo_uuid: hit.memoId,
    chunk_uuid: hit.chunkId,
    chunk_content: hit.content,
    memo_summary: hit.memoSummary,
    distance: hit.distance,
    ...(hit.lexical !== undefined && hit.dense !== undefined ? { score: { relevance: 1 - hit.distance, lexical: hit.lexical, dense: hit.dense } } : {}),
  };
}

/**
 * `{ results: hits.map(searchResultItem) }` as JSON bytes, byte for byte what JSON.stringify makes
 * of it, with each hit's texts (chunk content, memo summary) as `encodeText` encodes them: a caller
 * that keeps the encoded texts of the chunks it serves often skips escaping and UTF-8 encoding ~1 KB
 * of text per hit on every search.
 */
export function searchResponseJson(hits: readonly IndexSearchHit[], encodeText: (text: string) => Uint8Array = (text) => Buffer.from(JSON.stringify(text))): Buffer {
  const parts: Uint8Array[] = [RESULTS_OPEN];
  hits.forEach((hit, i) => {
    const score = hit.lexical !== undefined && hit.dense !== undefined ? `,"score":${JSON.stringify({ relevance: 1 - hit.distance, lexical: hit.lexical, dense: hit.dense })}` : '';
    parts.push(
      Buffer.from(`${i > 0 ? ',' : ''}{"memo_title":${JSON.stringify(hit.memoTitle)},"memo_uuid":${JSON.stringify(hit.memoId)},"chunk_uuid":${JSON.stringify(hit.chunkId)},"chunk_content":`),
      encodeText(hit.content),
      MEMO_SUMMARY_KEY,
      encodeText(hit.memoSummary),
      Buffer.from(`,"distance":${JSON.stringify(hit.distance)}${score}}`),
    );
  });
  parts.push(RESULTS_CLOSE);
  return Buffer.concat(parts);
}
const RESULTS_OPEN = Buffer.from('{"results":[');
const RESULTS_CLOSE = Buffer.from(']}');
const MEMO_SUMMARY_KEY = Buffer.from(',"memo_summary":');

export interface AgentChatRequest {
  projectId: string;
  query: string;
  systemPrompt?: string;
  filters: Filter[];
  chatId?: string;
  rag?: RagOptions;
  /** When set, tokens are published on `Subjects.tokenStream(streamId)`; the reply comes at the end. */
  streamId?: string;
}
export interface AgentChatReply {
  chatId: string;
  response: string;
  intermediateSteps: IntermediateStep[];
  citations: Citation[];
  /** Present when the request asked for references. */
  references?: References;
}

export interface AgentGenerateRequest {
  projectId: string;
  prompt: string;
  rules?: string;
  filters: Filter[];
  rag?: RagOptions;
  streamId?: string;
}
export interface AgentGenerateReply {
  response: string;
  intermediateSteps: IntermediateStep[];
  citations: Citation[];
  references?: References;
}

export interface ChatListRequest extends ChatListInput {
  projectId: string;
}
export type ChatListReply = ChatListResponse;

/** Where a page of a chat's messages starts: a message index and a character offset into its content. */
export interface ChatCursor {
  message: number;
  offset: number;
}
export interface ChatGetRequest {
  projectId: string;
  chatId: string;
  /** Absent: from the start. */
  cursor?: ChatCursor;
}
/**
 * One page of a chat, sized to fit a NATS message. When the request's cursor had an offset, the first
 * message continues that message's content; `next` is where the following page starts (absent: done).
 * The gateway asks for pages until `next` is absent and answers the whole chat.
 */
export type ChatGetReply = Chat & { next?: ChatCursor };

/** Queues the project's summaries to redo through the model; the reply says how many were queued. */
export interface ResummarizeRequest {
  projectId: string;
  fallbackOnly: boolean;
}
export type ResummarizeReply = ResummarizeResponse;

/**
 * One queued re-summary (`Streams.summaryJobs`), of the memo's `revision`. No content travels: the
 * agent reads the memo's content when it takes the job, and with `fallbackOnly` checks again that
 * the summary is still `extractive-fallback`.
 */
export interface SummaryJob {
  projectId: string;
  memoId: string;
  revision: number;
  fallbackOnly: boolean;
}
