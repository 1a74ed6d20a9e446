import type { EncodedDocument } from '@memex/text';
import { quantizeStored } from './quantize';

export interface StoredChunk {
  chunkId: string;
  memoId: string;
  projectId: string;
  revision: number;
  index: number;
  content: string;
  /**
   * Where the chunk's row is in its store (the embedded index's SQLite rowid), if it has one, so that
   * `fullVectors` reads its vector there instead of looking its id up: -1 when it has none.
   */
  row: number;
}

/** A chunk as added: its row where it has one (see {@link StoredChunk.row}). */
export type NewChunk = Omit<StoredChunk, 'row'> & { row?: number };

/**
 * A chunk's vector for rescoring: float32, or IEEE halves as stored at rest (the addon's
 * exactProducts reads both), kept as such so that a cache of them holds twice as many.
 */
export type FullVector = Float32Array | Uint16Array;

/** A uuid's first 12 hex digits (`xxxxxxxx-xxxx-`), lower case. */
const UUID_HEAD = /^[0-9a-f]{8}-[0-9a-f]{4}-/;

/**
 * A memo id's place in the order of ids as strings, as a number: the first 48 bits of a uuid in its
 * canonical lower-case form (the memo service's v7 and v5 ids), whose order as numbers is their
 * order as strings; -1 for any other id. Two ids with different keys, neither -1, are ordered by
 * their keys; any others by the strings (equal keys: the same memo, or uuids sharing 48 bits).
 */
export function memoOrderKey(memoId: string): number {
  if (!UUID_HEAD.test(memoId)) return -1;
  return Number.parseInt(memoId.slice(0, 8), 16) * 0x10000 + Number.parseInt(memoId.slice(9, 13), 16);
}

/**
 * Int8 codes for `length` bytes on a SharedArrayBuffer: the scan thread reads them where they are
 * (see scanThread.ts), never a copy.
 */
function sharedCodes(length: number): Int8Array {
  return new Int8Array(new SharedArrayBuffer(length));
}

/**
 * One model's slots: each added chunk takes the next slot, with its int8 codes, their scale, its
 * length in terms, its distinct term ids and its key in its project's graph, in arrays indexed by
 * slot. A removed chunk leaves its slot dead until {@link compact} moves the live ones down.
 */
export class SlotStore {
  /** Slots' int8 codes, written once each; grown or compacted into a new buffer, never rewritten in place. */
  codes: Int8Array;
  /** Each slot's int8 scale and its length in terms (BM25's dl), beside the codes for tight loops. */
  scales: Float32Array;
  lengths: Float32Array;
  /** Slots whose codes had to take a smaller norm than the others' (see quantizeStored); dead ones go at compaction. */
  shrunk = new Set<number>();
  /** Each slot's key in its project's graph, -1 when it has none. */
  graphKeys: Int32Array;
  /**
   * Each slot's distinct term ids (their frequencies live in the postings), for removal: a run of
   * `termCounts[slot]` ids from `termStarts[slot]` in one shared pool, not an array per chunk (a
   * typed array costs ~100 bytes before its first element). Dead slots' runs stay until compaction.
   */
  private termPool = new Uint32Array(4096);
  private termUsed = 0;
  private termStarts: Int32Array;
  private termCounts: Int32Array;
  /**
   * Each slot's memo id as a number in the same order as the ids (see {@link memoOrderKey}), so the
   * tie-break of equal scores (memo, then chunk: every ranking's top k makes many on a corpus with
   * repeated passages) compares two numbers, not two chunks' id strings.
   */
  private memoOrder: Float64Array;
  /** The chunk in each slot; undefined once removed. */
  readonly chunks: (StoredChunk | undefined)[] = [];
  /** Each memo's slots (live ones, and dead ones until its next removal or a compaction). */
  readonly byMemo = new Map<string, number[]>();
  live = 0;
  private dead = 0;
  /** Bumped when slots are renumbered (compaction): scan results from before no longer apply. */
  layout = 0;

  constructor(
    readonly dimension: number,
    initialCapacity: number,
  ) {
    this.codes = sharedCodes(initialCapacity * dimension);
    this.scales = new Float32Array(initialCapacity);
    this.lengths = new Float32Array(initialCapacity);
    this.graphKeys = new Int32Array(initialCapacity).fill(-1);
    this.termStarts = new Int32Array(initialCapacity);
    this.termCounts = new Int32Array(initialCapacity);
    this.memoOrder = new Float64Array(initialCapacity);
  }

  /** Slots handed out so far, live or dead. */
  get size(): number {
    return this.chunks.length;
  }

  /** Puts a chunk in the next slot, its vector quantized (see quantizeStored); returns the slot. */
  add(chunk: NewChunk, dense: Float32Array, terms: EncodedDocument): number {
    const dim = this.dimension;
    const slot = this.chunks.length;
    if (slot + 1 > this.scales.length) this.grow(Math.max(this.scales.length * 2, slot + 1));
    const { scale, shrunk } = quantizeStored(dense, this.codes, slot * dim);
    this.scales[slot] = scale;
    if (shrunk) this.shrunk.add(slot);
    this.lengths[slot] = terms.length;
    this.graphKeys[slot] = -1;
    this.memoOrder[slot] = memoOrderKey(chunk.memoId);
    this.keepTermIds(slot, terms.indices);
    // One object shape for every slot (property reads in the search loops stay monomorphic).
    const stored: StoredChunk = {
      chunkId: chunk.chunkId,
      memoId: chunk.memoId,
      projectId: chunk.projectId,
      revision: chunk.revision,
      index: chunk.index,
      content: chunk.content,
      row: chunk.row ?? -1,
    };
    this.chunks.push(stored);
    const list = this.byMemo.get(chunk.memoId);
    if (list) list.push(slot);
    else this.byMemo.set(chunk.memoId, [slot]);
    this.live += 1;
    return slot;
  }

  /** The distinct term ids the chunk in `slot` was added with. */
  termIds(slot: number): Uint32Array {
    const start = this.termStarts[slot]!;
    return this.termPool.subarray(start, start + this.termCounts[slot]!);
  }

  /** Marks a slot dead (its memo's list is the caller's to update). */
  remove(slot: number): void {
    this.graphKeys[slot] = -1;
    this.chunks[slot] = undefined;
    this.live -= 1;
    this.dead += 1;
  }

  /** Whether dead slots are many enough to be worth a compaction: over 4,096 and over the live ones. */
  get wasteful(): boolean {
    return this.dead > 4096 && this.dead > this.live;
  }

  private grow(capacity: number): void {
    const codes = sharedCodes(capacity * this.dimension);
    codes.set(this.codes);
    this.codes = codes;
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    this.scales = scales;
    const lengths = new Float32Array(capacity);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const graphKeys = new Int32Array(capacity).fill(-1);
    graphKeys.set(this.graphKeys);
    this.graphKeys = graphKeys;
    const termStarts = new Int32Array(capacity);
    termStarts.set(this.termStarts);
    this.termStarts = termStarts;
    const termCounts = new Int32Array(capacity);
    termCounts.set(this.termCounts);
    this.termCounts = termCounts;
    const memoOrder = new Float64Array(capacity);
    memoOrder.set(this.memoOrder);
    this.memoOrder = memoOrder;
  }

  /** Appends a slot's term ids to the pool (grown by doubling). */
  private keepTermIds(slot: number, ids: ArrayLike<number>): void {
    if (this.termUsed + ids.length > this.termPool.length) {
      const pool = new Uint32Array(Math.max(this.termPool.length * 2, this.termUsed + ids.length));
      pool.set(this.termPool.subarray(0, this.termUsed));
      this.termPool = pool;
    }
    for (let i = 0; i < ids.length; i++) this.termPool[this.termUsed + i] = ids[i]!;
    this.termStarts[slot] = this.termUsed;
    this.termCounts[slot] = ids.length;
    this.termUsed += ids.length;
  }

  /**
   * Drops dead slots: live ones move down, in order, with their codes, statistics and memo lists;
   * every graph key is cleared (graphs are rebuilt). Returns each old slot's new one (-1: dropped).
   */
  compact(): Int32Array {
    const dim = this.dimension;
    const remap = new Int32Array(this.chunks.length).fill(-1);
    const capacity = Math.max(1024, this.live * 2);
    const codes = sharedCodes(capacity * dim);
    const scales = new Float32Array(capacity);
    const lengths = new Float32Array(capacity);
    const termStarts = new Int32Array(capacity);
    const termCounts = new Int32Array(capacity);
    const memoOrder = new Float64Array(capacity);
    let termUsed = 0;
    for (let old = 0; old < this.chunks.length; old++) if (this.chunks[old]) termUsed += this.termCounts[old]!;
    const termPool = new Uint32Array(Math.max(4096, termUsed * 2));
    termUsed = 0;
    const chunks: StoredChunk[] = [];
    this.chunks.forEach((chunk, old) => {
      if (!chunk) return;
      const slot = chunks.length;
      remap[old] = slot;
      codes.set(this.codes.subarray(old * dim, (old + 1) * dim), slot * dim);
      scales[slot] = this.scales[old]!;
      lengths[slot] = this.lengths[old]!;
      memoOrder[slot] = this.memoOrder[old]!;
      const start = this.termStarts[old]!;
      const count = this.termCounts[old]!;
      termPool.set(this.termPool.subarray(start, start + count), termUsed);
      termStarts[slot] = termUsed;
      termCounts[slot] = count;
      termUsed += count;
      chunks.push(chunk);
    });
    for (const [memoId, list] of this.byMemo) this.byMemo.set(memoId, list.map((old) => remap[old]!));
    this.shrunk = new Set([...this.shrunk].map((old) => remap[old]!).filter((slot) => slot >= 0));
    this.chunks.length = 0;
    for (const chunk of chunks) this.chunks.push(chunk); // (not push(...chunks): a spread of 100k+ arguments overflows the stack)
    this.codes = codes;
    this.scales = scales;
    this.lengths = lengths;
    this.graphKeys = new Int32Array(capacity).fill(-1);
    this.termPool = termPool;
    this.termUsed = termUsed;
    this.termStarts = termStarts;
    this.termCounts = termCounts;
    this.memoOrder = memoOrder;
    this.dead = 0;
    this.layout += 1;
    return remap;
  }

  /** Equal scores: memo uuid, then chunk index. */
  compare(a: number, b: number): number {
    const keyA = this.memoOrder[a]!;
    const keyB = this.memoOrder[b]!;
    if (keyA !== keyB && keyA >= 0 && keyB >= 0) return keyA - keyB;
    const x = this.chunks[a]!;
    const y = this.chunks[b]!;
    return x.memoId < y.memoId ? -1 : x.memoId > y.memoId ? 1 : x.index - y.index;
  }
}
