import type { WireError } from './errors';
import type { ContentRef } from './blobs';
import type { ChunkLayout, ErasureReason, MemoFile, ProcessingStage, SummarySource } from './events';
import type { IdType } from './http/memo';
import type { CreateMemoInput, UpdateMemoInput } from './http/validation';
import type { MemoCommandName } from './subjects';

/** Addresses a memo as the HTTP routes do: by UUID or by the client's reference id. */
export interface MemoRef {
  idType: IdType;
  id: string;
}

/** A create as the memo service stores it: the validated body, content by reference. */
export type StoredCreateInput = Omit<CreateMemoInput, 'content'> & { content: ContentRef; /** Set for uploads. */ file?: MemoFile };
/** An update as the memo service stores it. */
export type StoredUpdateInput = Omit<UpdateMemoInput, 'content'> & { content?: ContentRef };
/** One memo of a `create-batch`. */
export interface CreateBatchItem {
  memoId: string;
  /** StoredCreateInput */
  sealed: string;
  commandId: string;
  requestId?: string;
}
/** A `create-batch` item's answer: the memo, or the error a `create` of it would have thrown. */
export type CreateBatchOutcome = { memoId: string } | { error: WireError };
/** The sealed part of `record-chunks`. */
export interface ChunkPreview {
  firstChunk: string;
}
/** The sealed part of `record-summary`. */
export interface SummaryResult {
  summary: string;
  tags: string[];
  /** Absent from agents that predate it. */
  source?: SummarySource;
  /** Why the model's summary was not used (with `extractive-fallback`). */
  reason?: string;
}

/**
 * Commands travel through a JetStream work queue, whose acknowledged messages may linger in the
 * store files: every memo-identifying field is in `sealed`, a `Keyring.sealJson` of the type named
 * beside it, under the memo's key. Memos are addressed by uuid (the gateway resolves reference ids
 * first), so no reference id is written to the queue either.
 */
export interface MemoCommands {
  create: { projectId: string; memoId: string; /** StoredCreateInput */ sealed: string };
  /**
   * Creates of one project decided together and appended in one transaction; each item as `create`
   * would be, under its own memo's key, with its own command id (a repeat of the id answers as the
   * first run did). Items are answered in order, each on its own (one refused item fails no other).
   */
  'create-batch': { projectId: string; items: CreateBatchItem[] };
  update: { projectId: string; memoId: string; /** StoredUpdateInput */ sealed: string };
  delete: { projectId: string; memoId: string; reason?: ErasureReason };
  'record-chunks': { projectId: string; memoId: string; revision: number; model: string; chunks: ChunkLayout; /** ChunkPreview */ sealed: string };
  'record-summary': {
    projectId: string;
    memoId: string;
    revision: number;
    /** SummaryResult */ sealed: string;
    /** Replace the summary of a revision already summarized (`memex resummarize`). */
    replace?: boolean;
  };
  'record-processing-failure': {
    projectId: string;
    memoId: string;
    revision: number;
    stage: ProcessingStage;
    message: string;
  };
  /** The text the extractor read from the memo's file (`blob` is the file's blob name), by reference. */
  'record-extraction': { projectId: string; memoId: string; blob: string; content: ContentRef; format: string; pages: number };
}

interface MemoCommandResults {
  create: { memoId: string };
  'create-batch': { results: CreateBatchOutcome[] };
  update: { memoId: string };
  delete: { memoId: string };
  'record-chunks': { applied: boolean };
  'record-summary': { applied: boolean };
  'record-processing-failure': { applied: boolean };
  'record-extraction': { applied: boolean };
}

export type MemoCommandPayload<N extends MemoCommandName> = MemoCommands[N];
export type MemoCommandResult<N extends MemoCommandName> = MemoCommandResults[N];

/**
 * A handler's reply. `eventSeq` is the memo event stream's sequence of the last event the command
 * published (absent when it published none), so a caller can wait for projections to catch up.
 */
export type CommandReply<R> = { ok: true; result: R; eventSeq?: number } | { ok: false; error: WireError };
