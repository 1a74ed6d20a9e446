import type { BlobRef, ContentRef } from './blobs';
import type { DocumentFormat } from './files';

/**
 * Memo events: facts, past tense, one union. The memo service stores them and publishes each on
 * `Subjects.memoEvents(projectId, memoId)` as a `MemoEventMessage`.
 */


/**
 * A chunk by position: `content.slice(start, end)` of the revision it belongs to (UTF-16 offsets).
 */
export interface ChunkRecord {
  uuid: string;
  index: number;
  start: number;
  end: number;
}

/**
 * Every chunk of a revision, compact enough for one NATS message at any content size: chunk `i`'s
 * uuid is `chunkId(memoId, revision, i)`, and its offsets are the `i`-th (start, end) pair of
 * little-endian uint32s in `offsets` (base64). 8 bytes per chunk: a 16 MiB memo's ~20k chunks take
 * ~220 KB.
 */
export interface ChunkLayout {
  count: number;
  offsets: string;
}

/** Why a memo was erased. */
export type ErasureReason = 'deleted' | 'expired';

export interface TagRecord {
  uuid: string;
  tag: string;
}

export type ProcessingStage = 'extracting' | 'indexing' | 'summarizing';

/**
 * What wrote a memo's summary: `model`, the model's structured reply; `model-text`, the model's
 * prose taken as the summary; `extractive-fallback`, the built-in extractive summary because the
 * model could not give one (the reason is recorded beside it); `extractive`, the built-in
 * provider, configured as the agent's LLM.
 */
export type SummarySource = 'model' | 'model-text' | 'extractive-fallback' | 'extractive';
export const SUMMARY_SOURCES: readonly SummarySource[] = ['model', 'model-text', 'extractive-fallback', 'extractive'];

/**
 * An uploaded original file: where its bytes are kept (a blob key), and what it was. The memo's
 * content stays empty until the extractor records the file's text as a new content revision.
 */
export interface MemoFile {
  /** The original bytes in the blob store, sealed with the memo's key (`bytes`/`sha256` of the sealed form). */
  blob: BlobRef;
  filename: string;
  /** The content type the bytes were found to be (not the one the client claimed). */
  mimetype: string;
  format: DocumentFormat;
  /** Size and SHA-256 of the original (plaintext) bytes. */
  size: number;
  sha256: string;
}

/** Where a content revision came from: the client, or text extracted from the memo's file. */
export type ContentOrigin = 'client' | 'extraction';

export type MemoEvent =
  | {
      type: 'MemoCreated';
      data: {
        memoId: string;
        projectId: string;
        revision: number;
        title: string;
        content: ContentRef;
        metadata: Record<string, unknown>;
        clientReferenceId: string | null;
        source: string | null;
        memoType: string;
        expirationDate: string | null;
        tags: TagRecord[];
        createdAt: string;
        /** Set for uploads: the content is empty until extraction records the file's text. */
        file?: MemoFile;
      };
    }
  | {
      type: 'MemoUpdated';
      data: {
        memoId: string;
        projectId: string;
        changes: {
          title?: string;
          metadata?: Record<string, unknown>;
          clientReferenceId?: string | null;
          source?: string | null;
          memoType?: string;
          expirationDate?: string | null;
        };
        updatedAt: string;
      };
    }
  | {
      type: 'MemoContentChanged';
      data: { memoId: string; projectId: string; revision: number; content: ContentRef; updatedAt: string; origin?: ContentOrigin };
    }
  | {
      type: 'MemoChunked';
      /** `firstChunk`: the text of chunk 0, which title search answers with, for content in a blob (inline content: empty, it holds the text). */
      data: { memoId: string; projectId: string; revision: number; model: string; chunks: ChunkLayout; firstChunk: string; at: string };
    }
  | {
      type: 'MemoSummarized';
      /**
       * `tags`: the tags found with the summary, in the same event. Absent in events written before
       * (and with `MEMEX_SEAL_DEFLATE=false`): a `MemoTagged` followed those.
       * `source` and `reason` (why the model's summary was not used): absent in older events.
       */
      data: {
        memoId: string;
        projectId: string;
        revision: number;
        summary: string;
        tags?: TagRecord[];
        source?: SummarySource;
        reason?: string;
        at: string;
      };
    }
  /** Found tags on their own: what summaries were followed by before `MemoSummarized` carried them. Still read. */
  | { type: 'MemoTagged'; data: { memoId: string; projectId: string; revision: number; tags: TagRecord[]; at: string } }
  | {
      type: 'MemoProcessingFailed';
      data: { memoId: string; projectId: string; revision: number; stage: ProcessingStage; message: string; at: string };
    }
  | { type: 'MemoArchived'; data: { memoId: string; projectId: string; reason: 'expired'; at: string } }
  | { type: 'MemoUnarchived'; data: { memoId: string; projectId: string; at: string } }
  /**
   * The tombstone: all that stays of an erased memo (never sealed: it names nothing but ids).
   * `file`: the blob name of the memo's uploaded original (ids only), for the extractor to delete.
   */
  | { type: 'MemoDeleted'; data: { memoId: string; projectId: string; at: string; reason?: ErasureReason; file?: string } };

export type MemoEventType = MemoEvent['type'];

export const MEMO_EVENT_TYPES: readonly MemoEventType[] = [
  'MemoCreated',
  'MemoUpdated',
  'MemoContentChanged',
  'MemoChunked',
  'MemoSummarized',
  'MemoTagged',
  'MemoProcessingFailed',
  'MemoArchived',
  'MemoUnarchived',
  'MemoDeleted',
];

/**
 * What consumers filter and rank by, as it stands after the event. Every published event carries
 * it, so a projection only keeps the highest version it has seen and never needs the events in
 * order. `null` after `MemoDeleted`.
 */
export interface MemoAttributes {
  projectId: string;
  memoId: string;
  /** The content revision: 1 at creation, +1 on every content change. */
  revision: number;
  title: string;
  summary: string;
  source: string | null;
  clientReferenceId: string | null;
  memoType: string;
  tags: string[];
  metadata: Record<string, unknown>;
  archived: boolean;
  expirationDate: string | null;
}

/**
 * One message on the memo event stream. Published after commit; may arrive twice; dedupe by `id`.
 * On the wire every event but the tombstone is sealed with the memo's data key: `data` then holds
 * only `memoId` and `projectId`, `memo` is null, and `sealed` carries both; the event consumer
 * opens it before handlers see the event (and skips it once the key is erased). The bytes on the
 * bus: JSON, or the sealed box as raw bytes after it (`encodeMemoEvent`/`decodeMemoEvent` in runtime).
 */
export interface MemoEventMessage<E extends MemoEvent = MemoEvent> {
  /** The event id, also its `Nats-Msg-Id`. */
  id: string;
  type: E['type'];
  /** The memo stream version this event has (1 for MemoCreated). */
  version: number;
  occurredAt: string;
  data: E['data'];
  memo: MemoAttributes | null;
  /** Sealed `{ data, memo }` (see above); absent once opened, and on tombstones. */
  sealed?: string;
}

/**
 * The plaintext a sealed event carries. On the bus `memo` is always there; in the memo service's
 * event rows it is left out (the stream's fold gives it back) unless written for a rolling upgrade.
 */
export interface SealedEventBody {
  data: unknown;
  memo?: MemoAttributes | null;
}

/** Packs chunk offsets into a `ChunkLayout`. */
export function packChunks(chunks: readonly { start: number; end: number }[]): ChunkLayout {
  const buf = Buffer.alloc(chunks.length * 8);
  chunks.forEach((c, i) => {
    buf.writeUInt32LE(c.start, i * 8);
    buf.writeUInt32LE(c.end, i * 8 + 4);
  });
  return { count: chunks.length, offsets: buf.toString('base64') };
}

/** The (start, end) pairs of a `ChunkLayout`, in chunk order. */
export function unpackChunks(layout: ChunkLayout): { index: number; start: number; end: number }[] {
  const buf = Buffer.from(layout.offsets, 'base64');
  if (buf.byteLength !== layout.count * 8) throw new Error('chunk layout is malformed');
  const out: { index: number; start: number; end: number }[] = [];
  for (let i = 0; i < layout.count; i++) out.push({ index: i, start: buf.readUInt32LE(i * 8), end: buf.readUInt32LE(i * 8 + 4) });
  return out;
}

export const EMPTY_CHUNKS: ChunkLayout = { count: 0, offsets: '' };

/**
 * Whether an (opened) event starts a content revision to chunk, embed and summarize. An upload's
 * `MemoCreated` does not: its content is empty until extraction adds a `MemoContentChanged`.
 */
export function startsContentRevision(event: Pick<MemoEventMessage, 'type' | 'data'>): boolean {
  if (event.type === 'MemoContentChanged') return true;
  return event.type === 'MemoCreated' && (event.data as { file?: unknown } | undefined)?.file === undefined;
}
