import type { WireError } from './errors';
import type { ChunkRecord, MemoFile, ProcessingStage } from './events';
import type { IdType } from './http/memo';
import type { CreateMemoInput, UpdateMemoInput } from './http/validation';
import type { MemoCommandName } from './subjects';

/** Addresses a memo as the HTTP routes do: by UUID or by the client's reference id. */
export interface MemoRef {
  idType: IdType;
  id: string;
}

export interface MemoCommands {
  create: { projectId: string; memoId: string; input: CreateMemoInput; file?: MemoFile };
  update: { projectId: string; ref: MemoRef; input: UpdateMemoInput };
  delete: { projectId: string; ref: MemoRef };
  'record-chunks': { projectId: string; memoId: string; revision: number; model: string; chunks: ChunkRecord[] };
  'record-summary': { projectId: string; memoId: string; revision: number; summary: string; tags: string[] };
  'record-processing-failure': {
    projectId: string;
    memoId: string;
    revision: number;
    stage: ProcessingStage;
    message: string;
  };
  archive: { projectId: string; memoId: string };
  /** The text the extractor read from the memo's file (`blob` is the file's blob name). */
  'record-extraction': { projectId: string; memoId: string; blob: string; content: string; format: string; pages: number };
}

export interface MemoCommandResults {
  create: { memoId: string };
  update: { memoId: string };
  delete: { memoId: string };
  'record-chunks': { applied: boolean };
  'record-summary': { applied: boolean };
  'record-processing-failure': { applied: boolean };
  archive: { applied: boolean };
  'record-extraction': { applied: boolean };
}

export type MemoCommandPayload<N extends MemoCommandName> = MemoCommands[N];
export type MemoCommandResult<N extends MemoCommandName> = MemoCommandResults[N];

/**
 * A handler's reply. `eventSeq` is the memo event stream's sequence of the last event the command
 * published (absent when it published none), so a caller can wait for projections to catch up.
 */
export type CommandReply<R> = { ok: true; result: R; eventSeq?: number } | { ok: false; error: WireError };
