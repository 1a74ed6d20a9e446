import type { Filter } from './filters';
import type { ChatListInput } from './http/validation';
import type { Chat, ChatListResponse, Citation, IntermediateStep } from './http/chat';
import type { Memo } from './http/memo';
import type { MemoHistoryResponse, MemoListInput, MemoListResponse, MemoStatusResponse } from './http/catalog';
import type { MemoFile } from './events';
import type { SearchResultItem } from './http/search';
import type { MemoRef } from './commands';
import type { WireError } from './errors';

/** Every query reply: a value, or a typed error. */
export type QueryReply<T> = { ok: true; value: T } | { ok: false; error: WireError };

export interface MemoGetRequest {
  projectId: string;
  ref: MemoRef;
}
export type MemoGetReply = Memo;

export interface MemoListRequest extends MemoListInput {
  projectId: string;
}
export type MemoListReply = MemoListResponse;

/** Status, history and file look-ups address a memo as GET does; another project's memo is not found. */
export interface MemoAddressRequest {
  projectId: string;
  ref: MemoRef;
}
export type MemoStatusReply = MemoStatusResponse;
export type MemoHistoryReply = MemoHistoryResponse;
export interface MemoFileReply {
  memoId: string;
  file: MemoFile;
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

export interface AgentChatRequest {
  projectId: string;
  query: string;
  systemPrompt?: string;
  filters: Filter[];
  chatId?: string;
  /** When set, tokens are published on `Subjects.tokenStream(streamId)`; the reply comes at the end. */
  streamId?: string;
}
export interface AgentChatReply {
  chatId: string;
  response: string;
  intermediateSteps: IntermediateStep[];
  citations: Citation[];
}

export interface AgentGenerateRequest {
  projectId: string;
  prompt: string;
  rules?: string;
  filters: Filter[];
  streamId?: string;
}
export interface AgentGenerateReply {
  response: string;
  intermediateSteps: IntermediateStep[];
  citations: Citation[];
}

export interface ChatListRequest extends ChatListInput {
  projectId: string;
}
export type ChatListReply = ChatListResponse;

export interface ChatGetRequest {
  projectId: string;
  chatId: string;
}
export type ChatGetReply = Chat;
