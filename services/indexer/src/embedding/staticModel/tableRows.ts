/**
 * A static model's table read from its file row by row, as tokens ask for them, through a
 * direct-mapped cache of rows as float32 values (16 MiB by default: 32k rows of the 100-d default
 * model, which hold nearly every token of running text). A float16 table's rows are converted once,
 * as they are read: summing halves through a 256 KiB table of their values was the embedder's
 * largest part once its tokenizer was fast, a load a component that misses the cache once a search
 * has evicted that table. The process keeps the cache, not the table: the default model's 64 MB
 * stay in the file (and in the OS page cache, shared by every process that reads it) instead of in
 * each indexer's resident memory.
 */
import fs from 'node:fs';
import { float16Value } from '../../numeric/float16';
import type { StaticTableLocation } from './reader';

const DEFAULT_ROW_CACHE_BYTES = 16 * 1024 * 1024;

export class TableRows {
  /** The cache's rows, as float32 values; see `offset`. */
  readonly values: Float32Array;
  /** A row as the file holds it (float16 bits or float32 values), before it goes into `values`. */
  private readonly read: Uint8Array;
  private readonly readHalves: Uint16Array | undefined;
  private readonly tags: Int32Array;
  private readonly mask: number;
  private readonly rowBytes: number;
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly location: StaticTableLocation,
    cacheBytes = DEFAULT_ROW_CACHE_BYTES,
  ) {
    this.rowBytes = location.dimension * (location.dtype === 'float16' ? 2 : 4);
    // A power of two of rows, no more than the table has.
    const valueBytes = location.dimension * 4;
    let capacity = 1;
    while (capacity * 2 * valueBytes <= cacheBytes && capacity < location.rows) capacity *= 2;
    this.mask = capacity - 1;
    this.values = new Float32Array(capacity * location.dimension);
    this.tags = new Int32Array(capacity).fill(-1);
    this.read = new Uint8Array(this.rowBytes);
    this.readHalves = location.dtype === 'float16' ? new Uint16Array(this.read.buffer) : undefined;
  }

  get rows(): number {
    return this.location.rows;
  }

  get dimension(): number {
    return this.location.dimension;
  }

  /** Where row `id` starts in `values`, read from the file unless the cache holds it. Valid until the next call. */
  offset(id: number): number {
    if (this.closed) throw new Error('the model file is closed');
    const slot = id & this.mask;
    const at = slot * this.location.dimension;
    if (this.tags[slot] !== id) {
      const position = this.location.byteOffset + id * this.rowBytes;
      const read = fs.readSync(this.fd, this.read, 0, this.rowBytes, position);
      if (read !== this.rowBytes) throw new Error(`model file truncated: row ${id} of ${this.location.rows} is not all there`);
      const halves = this.readHalves;
      if (halves) for (let k = 0; k < halves.length; k++) this.values[at + k] = float16Value(halves[k]!);
      else this.values.set(new Float32Array(this.read.buffer, 0, this.location.dimension), at);
      this.tags[slot] = id;
    }
    return at;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}
