/**
 * The forms an event row takes in the SQLite event store, and the one seam that reads them all.
 *
 * - lean (written by default): a sealed event's data as bytes (packData), uuids and memo stream
 *   names as bytes (packId, packStream), meta as bytes (packMeta), the subject once ('' when it is
 *   the one the data's ids name);
 * - whole (written with `compact: false`, MEMEX_SEAL_DEFLATE=false, while a version that reads only
 *   it shares the file): every column as text, data and meta as JSON, the subject in meta too.
 *
 * `fromRow` upcasts any row, of either form or a mix (a row deflated as a whole, text ids), to the
 * current `StoredEvent`. The store looks a stream or an event id up in both forms (`bothStreamForms`,
 * `packId`); nothing else there depends on a row's form.
 */
import { compressText, decompressText, uuidFromBytes, uuidToBytes } from '@memex/runtime';
import { isSubjectToken, Subjects } from '@memex/contracts';
import type { EventMeta, NewEvent, StoredEvent } from './port';

export interface EventRow {
  position: number;
  id: string | Buffer;
  stream: string | Buffer;
  version: number;
  type: string;
  data: string | Buffer;
  meta: string | Buffer;
  occurred_at: string;
  subject: string | null;
}

/**
 * The bus subject of a memo event, named by the ids its data carries in clear (sealed events too);
 * a row whose subject is that one stores '' instead: 88 bytes a row that say nothing new.
 */
function derivedSubject(data: unknown): string | undefined {
  const { memoId, projectId } = (data ?? {}) as { memoId?: unknown; projectId?: unknown };
  if (typeof memoId !== 'string' || typeof projectId !== 'string' || !isSubjectToken(memoId) || !isSubjectToken(projectId)) return undefined;
  return Subjects.memoEvents(projectId, memoId);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const META_COMMAND = 1;
const META_REQUEST = 2;

/**
 * Meta that is only a command id and a request id (what the memo service writes) as 1 + 16 + 16
 * bytes: a flag byte saying which are there, then each uuid's bytes. 33 bytes for the 103 of its
 * JSON; anything else stays JSON.
 */
function packMeta(meta: EventMeta): string | Buffer {
  const { commandId, requestId, ...rest } = meta;
  const ids = [commandId, requestId];
  if (Object.values(rest).some((v) => v !== undefined) || ids.some((id) => id !== undefined && (typeof id !== 'string' || !UUID.test(id)))) {
    return JSON.stringify(meta);
  }
  const parts = ids.filter((id): id is string => id !== undefined).map((id) => uuidToBytes(id));
  return Buffer.concat([Buffer.of((commandId !== undefined ? META_COMMAND : 0) | (requestId !== undefined ? META_REQUEST : 0)), ...parts]);
}

function unpackMeta(stored: string | Buffer): EventMeta {
  if (typeof stored === 'string') return JSON.parse(stored) as EventMeta;
  const flags = stored[0]!;
  const meta: EventMeta = {};
  let at = 1;
  if (flags & META_COMMAND) {
    meta.commandId = uuidFromBytes(stored, at);
    at += 16;
  }
  if (flags & META_REQUEST) meta.requestId = uuidFromBytes(stored, at);
  return meta;
}

/**
 * The first byte of a `packData` BLOB. As the first byte of a raw deflate stream it would declare
 * a block of the reserved type 3, so no `compressText` BLOB starts with it.
 */
const SEALED_DATA = 0xfe;

/**
 * A sealed event's data (`{ memoId, projectId, sealed }`, uuids and a base64 box, see
 * SealedEventStore) as 1 + 16 + 16 bytes and the box's own bytes: ciphertext does not deflate, so
 * it is not tried. Anything else is JSON, deflated when that is smaller.
 */
function packData(data: unknown): string | Buffer {
  const { memoId, projectId, sealed, ...rest } = (data ?? {}) as { memoId?: unknown; projectId?: unknown; sealed?: unknown };
  if (Object.keys(rest).length === 0 && typeof memoId === 'string' && typeof projectId === 'string' && typeof sealed === 'string' && UUID.test(memoId) && UUID.test(projectId)) {
    const box = Buffer.from(sealed, 'base64');
    if (box.toString('base64') === sealed) return Buffer.concat([Buffer.of(SEALED_DATA), uuidToBytes(memoId), uuidToBytes(projectId), box]);
  }
  return compressText(JSON.stringify(data));
}

function unpackData(stored: string | Buffer): unknown {
  if (typeof stored !== 'string' && stored[0] === SEALED_DATA) {
    return { memoId: uuidFromBytes(stored, 1), projectId: uuidFromBytes(stored, 17), sealed: stored.toString('base64', 33) };
  }
  return JSON.parse(decompressText(stored)) as unknown;
}

const MEMO_STREAM = 1;
const REFERENCE_STREAM = 2;
const MEMO_STREAM_NAME = /^memo-([0-9a-f-]{36})-([0-9a-f-]{36})$/;
const REFERENCE_STREAM_NAME = /^memoref-([0-9a-f-]{36})-([0-9a-f]{64})$/;

/**
 * A memo stream's name (`memo-<project>-<memo>`, 78 characters) as 1 + 16 + 16 bytes, a reference
 * stream's (`memoref-<project>-<sha-256 hex>`) as 1 + 16 + 32; any other name stays text. The name
 * is stored twice a row (the row, the (stream, version) index), three rows a memo. A memo's stream
 * is read and written a dozen times while it is processed: the packed names of the streams last
 * used are kept (`packedStreams`).
 */
function packStream(name: string): string | Buffer {
  let packed = packedStreams.get(name);
  if (packed === undefined) {
    if (packedStreams.size >= PACKED_STREAMS_KEPT) packedStreams.clear();
    packedStreams.set(name, (packed = packStreamName(name)));
  }
  return packed;
}

const PACKED_STREAMS_KEPT = 4096;
const packedStreams = new Map<string, string | Buffer>();

function packStreamName(name: string): string | Buffer {
  const memo = MEMO_STREAM_NAME.exec(name);
  if (memo && UUID.test(memo[1]!) && UUID.test(memo[2]!)) return Buffer.concat([Buffer.of(MEMO_STREAM), uuidToBytes(memo[1]!), uuidToBytes(memo[2]!)]);
  const reference = REFERENCE_STREAM_NAME.exec(name);
  if (reference && UUID.test(reference[1]!)) return Buffer.concat([Buffer.of(REFERENCE_STREAM), uuidToBytes(reference[1]!), Buffer.from(reference[2]!, 'hex')]);
  return name;
}

function unpackStream(stored: string | Buffer): string {
  if (typeof stored === 'string') return stored;
  if (stored[0] === MEMO_STREAM) return `memo-${uuidFromBytes(stored, 1)}-${uuidFromBytes(stored, 17)}`;
  if (stored[0] === REFERENCE_STREAM) return `memoref-${uuidFromBytes(stored, 1)}-${stored.toString('hex', 17)}`;
  throw new Error(`unknown stream form ${stored[0]}`);
}

/** An event id that is a uuid as its 16 bytes (both the row and the id's unique index hold it). */
export const packId = (id: string): string | Buffer => (UUID.test(id) ? uuidToBytes(id) : id);
const unpackId = (stored: string | Buffer): string => (typeof stored === 'string' ? stored : uuidFromBytes(stored));

/**
 * The two forms a stream name may be stored in, to bind to `IN (?, ?)`: rows written before the
 * packed forms, and rows written with `compact: false`, hold the text.
 */
export const bothStreamForms = (name: string): [string | Buffer, string] => [packStream(name), name];

/** Any stored row as the current `StoredEvent`. */
export function fromRow(row: EventRow): StoredEvent {
  const data = unpackData(row.data);
  const subject = row.subject === '' ? derivedSubject(data) : row.subject;
  if (subject === undefined) throw new Error(`event ${row.id}: its subject is derived, but its data names no memo`);
  return {
    position: row.position,
    id: unpackId(row.id),
    streamName: unpackStream(row.stream),
    version: row.version,
    type: row.type,
    data,
    meta: { ...unpackMeta(row.meta), ...(subject === null ? {} : { subject }) },
    occurredAt: row.occurred_at,
  };
}

/** The columns of a new row, in the lean form or (`compact: false`) the whole one. */
export function toRow(e: NewEvent, streamName: string, version: number, { compact }: { compact: boolean }): Omit<EventRow, 'position'> {
  return {
    id: compact ? packId(e.id) : e.id,
    stream: compact ? packStream(streamName) : streamName,
    version,
    type: e.type,
    data: compact ? packData(e.data) : JSON.stringify(e.data),
    meta: compact ? packMeta({ ...e.meta, subject: undefined }) : JSON.stringify(e.meta),
    occurred_at: e.occurredAt,
    subject: e.meta.subject === undefined ? null : compact && e.meta.subject === derivedSubject(e.data) ? '' : e.meta.subject,
  };
}
