/**
 * Rows at rest and back: chunk vectors (float16, or float32 as earlier versions wrote), term ids and
 * frequencies (varint, or the fixed-width forms written before), catalog attributes (deflated JSON
 * without the row's ids, or whole). Every form ever written is read; `compact: false` writes the
 * earlier ones, for a rolling upgrade where older versions still share the file.
 */
import type { MemoAttributes } from '@memex/contracts';
import { decompressText } from '@memex/runtime';
import type { EncodedDocument } from '@memex/text';
import { decodeFloat16, encodeFloat16 } from '../../numeric/float16';
import type { CatalogEntry } from '../port';

/** A chunk's columns, encoded before its transaction (see `putChunksOfMemos`). */
export type EncodedChunk = Pick<ChunkRow, 'chunk_id' | 'idx' | 'content' | 'dense' | 'terms'>;

export interface ChunkRow {
  /** Where the row is in the table (see StoredChunk.row); not a column written, and not stable across a VACUUM. */
  rowid: number;
  model: string;
  chunk_id: string;
  memo_id: string;
  project_id: string;
  revision: number;
  idx: number;
  content: string | Buffer;
  dense: Buffer;
  terms: Buffer;
}

export interface CatalogRow {
  memo_id: string;
  project_id: string;
  version: number;
  memo: string | Buffer | null;
}

/**
 * A chunk's vector at rest: float16 (2 bytes a component; what rescoring reads is within 2⁻¹¹ of
 * the embedding), or float32 as versions before wrote, and still write when not `compact`.
 */
export function encodeDense(v: Float32Array, compact: boolean): Buffer {
  return compact ? encodeFloat16(v) : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** Either form, told apart by its size. */
export function decodeDense(b: Buffer, dimension: number): Float32Array {
  if (b.byteLength === dimension * 2) return decodeFloat16(b);
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** The high bits of a terms blob's first word: its form (neither: u32 frequencies, as first written). */
const TERMS_U16 = 0x8000_0000;
const TERMS_VARINT = 0x4000_0000;

function writeVarint(b: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    b[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  b[at++] = value;
  return at;
}

/**
 * Term ids and frequencies at rest, little-endian: [n | form: u32][length: u32], then
 * - TERMS_VARINT (what the index writes): the ids' gaps (ascending: a gap of a 32-bit hash among
 *   ~80 terms fits 4 varint bytes) as varints, then the frequencies as varints (mostly 1 byte);
 * - TERMS_U16 (written before): ids as u32, frequencies as u16;
 * - no flag (written first, and with `compact: false`): ids and frequencies as u32.
 * The index keeps frequencies as u16 anyway.
 */
export function encodeTerms(t: EncodedDocument, compact: boolean): Buffer {
  const n = t.indices.length;
  if (!compact) {
    const b = Buffer.alloc(8 + 8 * n);
    b.writeUInt32LE(n, 0);
    b.writeUInt32LE(t.length, 4);
    for (let i = 0; i < n; i++) {
      b.writeUInt32LE(t.indices[i]!, 8 + 4 * i);
      b.writeUInt32LE(t.values[i]!, 8 + 4 * n + 4 * i);
    }
    return b;
  }
  const b = Buffer.allocUnsafe(8 + 5 * n + 3 * n);
  b.writeUInt32LE((n | TERMS_VARINT) >>> 0, 0);
  b.writeUInt32LE(t.length, 4);
  let at = 8;
  let previous = 0;
  for (let i = 0; i < n; i++) {
    at = writeVarint(b, at, t.indices[i]! - previous);
    previous = t.indices[i]!;
  }
  for (let i = 0; i < n; i++) at = writeVarint(b, at, Math.min(t.values[i]!, 0xffff));
  return Buffer.from(b.subarray(0, at));
}

export function decodeTerms(b: Buffer): EncodedDocument {
  const head = b.readUInt32LE(0);
  const n = head & ~(TERMS_U16 | TERMS_VARINT);
  const indices: number[] = new Array(n);
  const values: number[] = new Array(n);
  if (head & TERMS_VARINT) {
    let at = 8;
    // (by a running power of 128, not `2 ** shift`, for which V8 calls pow: this loop dominates loading)
    const read = (): number => {
      let value = 0;
      let scale = 1;
      let byte: number;
      do {
        byte = b[at++]!;
        value += (byte & 0x7f) * scale;
        scale *= 128;
      } while (byte & 0x80);
      return value;
    };
    let id = 0;
    for (let i = 0; i < n; i++) indices[i] = id += read();
    for (let i = 0; i < n; i++) values[i] = read();
  } else {
    const short = (head & TERMS_U16) !== 0;
    for (let i = 0; i < n; i++) {
      indices[i] = b.readUInt32LE(8 + 4 * i);
      values[i] = short ? b.readUInt16LE(8 + 4 * n + 2 * i) : b.readUInt32LE(8 + 4 * n + 4 * i);
    }
  }
  return { indices, values, length: b.readUInt32LE(4) };
}

/**
 * A catalog row's attributes as JSON: without the ids the row has in columns (compact; stored
 * deflated), or whole as earlier versions wrote them (and still write when not compact).
 */
export function attributesJson(memo: MemoAttributes, compact: boolean): string {
  if (!compact) return JSON.stringify(memo);
  const { projectId: _projectId, memoId: _memoId, ...rest } = memo;
  return JSON.stringify(rest);
}

/** Either form of a row's attributes (`memo`: the row's, not a deletion). */
export function rowAttributes(row: CatalogRow, memo: string | Buffer): MemoAttributes {
  const stored = JSON.parse(decompressText(memo)) as Partial<MemoAttributes>;
  return (stored.memoId === undefined ? { projectId: row.project_id, memoId: row.memo_id, ...stored } : stored) as MemoAttributes;
}

/** A catalog row as the catalog in memory holds it; `attributes` reads a live row's (by default, from the row). */
export function toEntry(row: CatalogRow, attributes: (row: CatalogRow, memo: string | Buffer) => MemoAttributes = rowAttributes): CatalogEntry {
  return {
    memoId: row.memo_id,
    projectId: row.project_id,
    version: row.version,
    memo: row.memo === null ? null : attributes(row, row.memo),
  };
}
