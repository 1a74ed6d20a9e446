/**
 * Memo events: facts, past tense, one union. The memo service stores them and publishes each on
 * `Subjects.memoEvents(projectId, memoId)` as a `MemoEventMessage`.
 */

import type { ContentRef } from './blobs';

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

export type ProcessingStage = 'indexing' | 'summarizing';

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
  | { type: 'MemoContentChanged'; data: { memoId: string; projectId: string; revision: number; content: ContentRef; updatedAt: string } }
  | {
      type: 'MemoChunked';
      /** `firstChunk`: the text of chunk 0, which title search answers with (the content stays in its blob). */
      data: { memoId: string; projectId: string; revision: number; model: string; chunks: ChunkLayout; firstChunk: string; at: string };
    }
  | { type: 'MemoSummarized'; data: { memoId: string; projectId: string; revision: number; summary: string; at: string } }
  | { type: 'MemoTagged'; data: { memoId: string; projectId: string; revision: number; tags: TagRecord[]; at: string } }
  | {
      type: 'MemoProcessingFailed';
      data: { memoId: string; projectId: string; revision: number; stage: ProcessingStage; message: string; at: string };
    }
  | { type: 'MemoArchived'; data: { memoId: string; projectId: string; reason: 'expired'; at: string } }
  | { type: 'MemoUnarchived'; data: { memoId: string; projectId: string; at: string } }
  /** The tombstone: all that stays of an erased memo (never sealed: it names nothing but ids). */
  | { type: 'MemoDeleted'; data: { memoId: string; projectId: string; at: string; reason?: ErasureReason } };

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
 * opens it before handlers see the event (and skips it once the key is erased).
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

/** The plaintext a sealed event carries. */
export interface SealedEventBody {
  data: unknown;
  memo: MemoAttributes | null;
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
