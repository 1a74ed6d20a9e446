/**
 * A static model's table read from its file row by row, as tokens ask for them, through a
 * direct-mapped cache of rows (8 MiB by default: 40k rows of the 100-d float16 default model,
 * which hold nearly every token of running text). The process keeps the cache, not the table: the
 * default model's 64 MB stay in the file (and in the OS page cache, shared by every process that
 * reads it) instead of in each indexer's resident memory.
 */
import fs from 'node:fs';
import type { StaticTableLocation } from './reader';

export const DEFAULT_ROW_CACHE_BYTES = 8 * 1024 * 1024;

export class TableRows {
  /** The cache's rows as float16 bit patterns (float16 tables) or float32 values; see `offset`. */
  readonly half: Uint16Array | undefined;
  readonly full: Float32Array | undefined;
  private readonly bytes: Uint8Array;
  private readonly tags: Int32Array;
  private readonly mask: number;
  private readonly rowBytes: number;
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly location: StaticTableLocation,
    cacheBytes = DEFAULT_ROW_CACHE_BYTES,
  ) {
    const width = location.dtype === 'float16' ? 2 : 4;
    this.rowBytes = location.dimension * width;
    // A power of two of rows, no more than the table has.
    let capacity = 1;
    while (capacity * 2 * this.rowBytes <= cacheBytes && capacity < location.rows) capacity *= 2;
    this.mask = capacity - 1;
    const buffer = new ArrayBuffer(capacity * this.rowBytes);
    this.bytes = new Uint8Array(buffer);
    this.tags = new Int32Array(capacity).fill(-1);
    this.half = location.dtype === 'float16' ? new Uint16Array(buffer) : undefined;
    this.full = location.dtype === 'float32' ? new Float32Array(buffer) : undefined;
  }

  get rows(): number {
    return this.location.rows;
  }

  get dimension(): number {
    return this.location.dimension;
  }

  /** Where row `id` starts in `half`/`full`, read from the file unless the cache holds it. Valid until the next call. */
  offset(id: number): number {
    if (this.closed) throw new Error('the model file is closed');
    const slot = id & this.mask;
    if (this.tags[slot] !== id) {
      const position = this.location.byteOffset + id * this.rowBytes;
      const read = fs.readSync(this.fd, this.bytes, slot * this.rowBytes, this.rowBytes, position);
      if (read !== this.rowBytes) throw new Error(`model file truncated: row ${id} of ${this.location.rows} is not all there`);
      this.tags[slot] = id;
    }
    return slot * this.location.dimension;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}
