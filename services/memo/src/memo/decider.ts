/**
 * The memo aggregate as a decider: `decide(command, state) → events`, `evolve(state, event) → state`.
 * Pure: the clock and ids come in with the command.
 */
import {
  EMPTY_CHUNKS,
  MemexError,
  type ChunkLayout,
  type ContentRef,
  type ErasureReason,
  type MemoEvent,
  type MemoFile,
  type ProcessingStage,
  type StoredCreateInput,
  type StoredUpdateInput,
  type SummarySource,
  type TagRecord,
} from '@memex/contracts';
import { tagId } from '@memex/runtime';

export interface MemoData {
  memoId: string;
  projectId: string;
  createdAt: string;
  updatedAt: string;
  title: string;
  /** The current revision's content, by reference (sealed blob). */
  content: ContentRef;
  metadata: Record<string, unknown>;
  clientReferenceId: string | null;
  source: string | null;
  memoType: string;
  expirationDate: string | null;
  archived: boolean;
  /** Content revision: 1 at creation, +1 per content change. */
  revision: number;
  /** Tags the client gave at creation; dropped by a content change (spec section 3). */
  clientTags: TagRecord[];
  tags: TagRecord[];
  summary: string;
  /** What wrote `summary`, and why the model's was not used; null before a summary, or from older events. */
  summarySource: SummarySource | null;
  summaryReason: string | null;
  /** Chunks of `revision` once `chunkedRevision` equals it; empty before. */
  chunks: ChunkLayout;
  firstChunk: string;
  /** Revisions the processing results belong to; `pending` until both equal `revision`. */
  chunkedRevision: number;
  summarizedRevision: number;
  processingError: { stage: ProcessingStage; message: string; revision: number; at: string } | null;
  /** The uploaded original, when the memo came from a file. */
  file: MemoFile | null;
  /** True while the content is (or, before extraction, will be) the file's text; a client content change ends it. */
  contentFromFile: boolean;
  /** When processing of the current content began: creation or the client's last content change. */
  processingStartedAt: string;
  /** When chunks and the summary were recorded for the current revision. */
  chunkedAt: string | null;
  summarizedAt: string | null;
}

export type MemoState =
  | { status: 'empty' }
  | { status: 'active'; memo: MemoData }
  | { status: 'deleted'; memoId: string; projectId: string };

export const initialState = (): MemoState => ({ status: 'empty' });

export type MemoCommand =
  | { type: 'CreateMemo'; memoId: string; projectId: string; input: StoredCreateInput; now: string }
  | { type: 'RecordExtraction'; projectId: string; blob: string; content: ContentRef; now: string }
  | { type: 'UpdateMemo'; projectId: string; input: StoredUpdateInput; now: string }
  | { type: 'DeleteMemo'; projectId: string; reason: ErasureReason; now: string }
  | { type: 'RecordChunks'; projectId: string; revision: number; model: string; chunks: ChunkLayout; firstChunk: string; now: string }
  | {
      type: 'RecordSummary';
      projectId: string;
      revision: number;
      summary: string;
      tags: string[];
      source?: SummarySource;
      reason?: string;
      /** A new summary for a revision already summarized (a re-run through the model) replaces it. */
      replace?: boolean;
      now: string;
      /** The tags in a `MemoTagged` of their own, the form the version before reads (see formats.ts). */
      tagsApart?: boolean;
    }
  | {
      type: 'RecordProcessingFailure';
      projectId: string;
      revision: number;
      stage: ProcessingStage;
      message: string;
      now: string;
    };

/** An uploaded memo whose file has not been turned into text yet (its content is empty). */
export function awaitsExtraction(memo: MemoData): boolean {
  return memo.file !== null && memo.contentFromFile && memo.revision === 1;
}

export function isPending(memo: MemoData): boolean {
  return memo.chunkedRevision !== memo.revision || memo.summarizedRevision !== memo.revision;
}

function isExpired(expirationDate: string | null, now: string): boolean {
  return expirationDate !== null && Date.parse(expirationDate) <= Date.parse(now);
}

function tagRecords(memoId: string, tags: readonly string[]): TagRecord[] {
  const seen = new Set<string>();
  const out: TagRecord[] = [];
  for (const tag of tags) {
    if (seen.has(tag)) continue;
    seen.add(tag);
    out.push({ uuid: tagId(memoId, tag), tag });
  }
  return out;
}

/** The client's tags, then the found ones the client did not give. */
function withFoundTags(memo: MemoData, found: readonly TagRecord[]): TagRecord[] {
  const given = new Set(memo.clientTags.map((t) => t.tag));
  return [...memo.clientTags, ...found.filter((t) => !given.has(t.tag))];
}

/** The memo of an active state for a command from `projectId`; throws what the routes answer otherwise. */
function requireActive(state: MemoState, projectId: string): MemoData {
  if (state.status !== 'active') throw new MemexError('MemoNotFound');
  if (state.memo.projectId !== projectId) throw new MemexError('ResourceNotInProject');
  return state.memo;
}

/** Processing results go only to the live revision of a memo in the same project; anything else is dropped. */
function liveRevision(state: MemoState, projectId: string, revision: number): MemoData | undefined {
  if (state.status !== 'active') return undefined;
  const memo = state.memo;
  return memo.projectId === projectId && memo.revision === revision ? memo : undefined;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function decide(command: MemoCommand, state: MemoState): MemoEvent[] {
  switch (command.type) {
    case 'CreateMemo': {
      if (state.status !== 'empty') throw new MemexError('InvalidRequest', 'A memo with this id already exists');
      const { memoId, projectId, input, now } = command;
      const events: MemoEvent[] = [
        {
          type: 'MemoCreated',
          data: {
            memoId,
            projectId,
            revision: 1,
            title: input.title,
            content: input.content,
            metadata: input.metadata,
            clientReferenceId: input.referenceId,
            source: input.source,
            memoType: input.type,
            expirationDate: input.expirationDate,
            tags: tagRecords(memoId, input.tags),
            createdAt: now,
            ...(input.file ? { file: input.file } : {}),
          },
        },
      ];
      return events;
    }

    case 'UpdateMemo': {
      const memo = requireActive(state, command.projectId);
      const { input, now } = command;
      const { memoId, projectId } = memo;
      const changes: Extract<MemoEvent, { type: 'MemoUpdated' }>['data']['changes'] = {};
      if (input.title !== undefined && input.title !== memo.title) changes.title = input.title;
      if (input.metadata !== undefined && !sameJson(input.metadata, memo.metadata)) changes.metadata = input.metadata;
      if (input.clientReferenceId !== undefined && input.clientReferenceId !== memo.clientReferenceId) {
        changes.clientReferenceId = input.clientReferenceId;
      }
      if (input.source !== undefined && input.source !== memo.source) changes.source = input.source;
      if (input.type !== undefined && input.type !== memo.memoType) changes.memoType = input.type;
      if (input.expirationDate !== undefined && input.expirationDate !== memo.expirationDate) {
        changes.expirationDate = input.expirationDate;
      }
      const events: MemoEvent[] = [];
      if (Object.keys(changes).length > 0) events.push({ type: 'MemoUpdated', data: { memoId, projectId, changes, updatedAt: now } });
      // Equal content (same keyed digest) starts no revision.
      if (input.content !== undefined && input.content.digest !== memo.content.digest) {
        events.push({
          type: 'MemoContentChanged',
          data: { memoId, projectId, revision: memo.revision + 1, content: input.content, updatedAt: now, origin: 'client' },
        });
      }
      return events;
    }

    case 'DeleteMemo': {
      const memo = requireActive(state, command.projectId);
      if (command.reason === 'expired' && !isExpired(memo.expirationDate, command.now)) return [];
      const file = memo.file ? { file: memo.file.blob.name } : {};
      return [{ type: 'MemoDeleted', data: { memoId: memo.memoId, projectId: memo.projectId, at: command.now, reason: command.reason, ...file } }];
    }

    case 'RecordChunks': {
      const memo = liveRevision(state, command.projectId, command.revision);
      if (!memo || memo.chunkedRevision === command.revision) return [];
      return [
        {
          type: 'MemoChunked',
          data: {
            memoId: memo.memoId,
            projectId: memo.projectId,
            revision: command.revision,
            model: command.model,
            chunks: command.chunks,
            // Inline content holds the first chunk already (title search cuts it out by the layout):
            // only content in a blob needs its copy, so the event does not store the text twice.
            firstChunk: memo.content.inline === undefined ? command.firstChunk : '',
            at: command.now,
          },
        },
      ];
    }

    case 'RecordSummary': {
      const memo = liveRevision(state, command.projectId, command.revision);
      if (!memo) return [];
      if (memo.summarizedRevision === command.revision && !command.replace) return [];
      const { memoId, projectId } = memo;
      const { revision, summary, now: at } = command;
      const tags = tagRecords(memoId, command.tags);
      const origin = {
        ...(command.source !== undefined ? { source: command.source } : {}),
        ...(command.reason !== undefined ? { reason: command.reason } : {}),
      };
      // One event: a second would cost a row, a bus message and every consumer a delivery per memo.
      if (!command.tagsApart) return [{ type: 'MemoSummarized', data: { memoId, projectId, revision, summary, tags, ...origin, at } }];
      return [
        { type: 'MemoSummarized', data: { memoId, projectId, revision, summary, ...origin, at } },
        { type: 'MemoTagged', data: { memoId, projectId, revision, tags, at } },
      ];
    }

    case 'RecordExtraction': {
      // Applies while the content is still the file's (a client's content PATCH wins) and only when
      // the text differs (same keyed digest: no revision), so replaying extraction with better
      // parsers adds a revision only for news.
      if (state.status !== 'active' || state.memo.projectId !== command.projectId) return [];
      const memo = state.memo;
      if (!memo.file || memo.file.blob.name !== command.blob || !memo.contentFromFile) return [];
      if (command.content.digest === memo.content.digest) return [];
      return [
        {
          type: 'MemoContentChanged',
          data: {
            memoId: memo.memoId,
            projectId: memo.projectId,
            revision: memo.revision + 1,
            content: command.content,
            updatedAt: command.now,
            origin: 'extraction',
          },
        },
      ];
    }

    case 'RecordProcessingFailure': {
      const memo = liveRevision(state, command.projectId, command.revision);
      if (!memo) return [];
      if (command.stage === 'extracting' && !awaitsExtraction(memo)) return [];
      const done =
        command.stage === 'indexing' ? memo.chunkedRevision : command.stage === 'summarizing' ? memo.summarizedRevision : -1;
      if (done === command.revision) return [];
      return [
        {
          type: 'MemoProcessingFailed',
          data: {
            memoId: memo.memoId,
            projectId: memo.projectId,
            revision: command.revision,
            stage: command.stage,
            message: command.message,
            at: command.now,
          },
        },
      ];
    }

    default: {
      const never: never = command;
      throw new Error(`unknown command ${JSON.stringify(never)}`);
    }
  }
}

export function evolve(state: MemoState, event: MemoEvent): MemoState {
  if (event.type === 'MemoCreated') {
    const d = event.data;
    return {
      status: 'active',
      memo: {
        memoId: d.memoId,
        projectId: d.projectId,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        title: d.title,
        content: d.content,
        metadata: d.metadata,
        clientReferenceId: d.clientReferenceId,
        source: d.source,
        memoType: d.memoType,
        expirationDate: d.expirationDate,
        archived: false,
        revision: d.revision,
        clientTags: d.tags,
        tags: d.tags,
        summary: '',
        summarySource: null,
        summaryReason: null,
        chunks: EMPTY_CHUNKS,
        firstChunk: '',
        chunkedRevision: 0,
        summarizedRevision: 0,
        processingError: null,
        file: d.file ?? null,
        contentFromFile: d.file !== undefined,
        processingStartedAt: d.createdAt,
        chunkedAt: null,
        summarizedAt: null,
      },
    };
  }
  if (event.type === 'MemoDeleted') {
    return { status: 'deleted', memoId: event.data.memoId, projectId: event.data.projectId };
  }
  if (state.status !== 'active') return state;
  const memo = state.memo;
  const next = (changes: Partial<MemoData>): MemoState => ({ status: 'active', memo: { ...memo, ...changes } });

  switch (event.type) {
    case 'MemoUpdated': {
      const c = event.data.changes;
      return next({
        updatedAt: event.data.updatedAt,
        ...(c.title !== undefined ? { title: c.title } : {}),
        ...(c.metadata !== undefined ? { metadata: c.metadata } : {}),
        ...(c.clientReferenceId !== undefined ? { clientReferenceId: c.clientReferenceId } : {}),
        ...(c.source !== undefined ? { source: c.source } : {}),
        ...(c.memoType !== undefined ? { memoType: c.memoType } : {}),
        ...(c.expirationDate !== undefined ? { expirationDate: c.expirationDate } : {}),
      });
    }
    case 'MemoContentChanged': {
      const extracted = event.data.origin === 'extraction';
      return next({
        content: event.data.content,
        revision: event.data.revision,
        updatedAt: event.data.updatedAt,
        summary: '',
        // Text extracted from the file keeps the tags the uploader gave; new content from the client drops them (spec 3).
        tags: extracted ? memo.clientTags : [],
        clientTags: extracted ? memo.clientTags : [],
        summarySource: null,
        summaryReason: null,
        chunks: EMPTY_CHUNKS,
        firstChunk: '',
        processingError: null,
        contentFromFile: extracted,
        processingStartedAt: extracted ? memo.processingStartedAt : event.data.updatedAt,
        chunkedAt: null,
        summarizedAt: null,
      });
    }
    case 'MemoChunked':
      if (event.data.revision !== memo.revision) return state;
      return next({
        chunks: event.data.chunks,
        firstChunk: event.data.firstChunk,
        chunkedRevision: event.data.revision,
        chunkedAt: event.data.at,
        processingError: memo.processingError?.stage === 'indexing' ? null : memo.processingError,
      });
    case 'MemoSummarized':
      if (event.data.revision !== memo.revision) return state;
      return next({
        summary: event.data.summary,
        summarySource: event.data.source ?? null,
        summaryReason: event.data.reason ?? null,
        summarizedRevision: event.data.revision,
        summarizedAt: event.data.at,
        processingError: memo.processingError?.stage === 'summarizing' ? null : memo.processingError,
        ...(event.data.tags ? { tags: withFoundTags(memo, event.data.tags) } : {}),
      });
    case 'MemoTagged':
      if (event.data.revision !== memo.revision) return state;
      return next({ tags: withFoundTags(memo, event.data.tags) });
    case 'MemoProcessingFailed':
      if (event.data.revision !== memo.revision) return state;
      return next({
        processingError: {
          stage: event.data.stage,
          message: event.data.message,
          revision: event.data.revision,
          at: event.data.at,
        },
      });
    case 'MemoArchived':
      return next({ archived: true });
    case 'MemoUnarchived':
      return next({ archived: false });
    default: {
      const never: never = event;
      throw new Error(`unknown event ${JSON.stringify(never)}`);
    }
  }
}

/** Stored events (opened) as the decider's events. */
export function toDomainEvents(stored: readonly { type: string; data: unknown }[]): MemoEvent[] {
  return stored.map((e) => ({ type: e.type, data: e.data }) as MemoEvent);
}

export function fold(events: readonly MemoEvent[], state: MemoState = initialState()): MemoState {
  return events.reduce(evolve, state);
}
