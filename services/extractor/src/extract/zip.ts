import { inflateRawSync } from 'node:zlib';
import { ExtractionError } from './errors';

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

/**
 * A ZIP container read entry by entry from its central directory. Each entry is inflated by Node's
 * zlib with `maxOutputLength` set to what is left of the budget, so an entry that expands past it
 * (a zip bomb, or a lying size field) stops at the budget instead of filling memory.
 */
export class BoundedZip {
  private readonly entries = new Map<string, Entry>();
  private readonly view: DataView;
  private inflated = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly maxInflatedBytes: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.readDirectory();
  }

  private readDirectory(): void {
    const { view, bytes } = this;
    let eocd = -1;
    for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
      if (view.getUint32(i, true) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw new ExtractionError('corrupt', 'the ZIP container has no central directory');
    const count = view.getUint16(eocd + 10, true);
    let offset = view.getUint32(eocd + 16, true);
    if (count === 0xffff || offset === 0xffffffff) throw new ExtractionError('unsupported', 'ZIP64 containers are not supported');
    const decoder = new TextDecoder();
    for (let n = 0; n < count; n++) {
      if (offset + 46 > bytes.length || view.getUint32(offset, true) !== 0x02014b50) {
        throw new ExtractionError('corrupt', 'the ZIP central directory is damaged');
      }
      const method = view.getUint16(offset + 10, true);
      const compressedSize = view.getUint32(offset + 20, true);
      const nameLength = view.getUint16(offset + 28, true);
      const extraLength = view.getUint16(offset + 30, true);
      const commentLength = view.getUint16(offset + 32, true);
      const localOffset = view.getUint32(offset + 42, true);
      const name = decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength));
      this.entries.set(name, { name, method, compressedSize, localOffset });
      offset += 46 + nameLength + extraLength + commentLength;
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The entry's bytes, inflated within the container's remaining budget. */
  read(name: string): Uint8Array {
    const entry = this.entries.get(name);
    if (!entry) throw new ExtractionError('corrupt', `the document has no ${name}`);
    const { view, bytes } = this;
    const at = entry.localOffset;
    if (at + 30 > bytes.length || view.getUint32(at, true) !== 0x04034b50) {
      throw new ExtractionError('corrupt', `the ZIP entry ${name} is damaged`);
    }
    const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    const end = start + entry.compressedSize;
    if (end > bytes.length) throw new ExtractionError('corrupt', `the ZIP entry ${name} is truncated`);
    const data = bytes.subarray(start, end);
    if (entry.method === 0) {
      this.count(data.length);
      return data;
    }
    if (entry.method !== 8) throw new ExtractionError('unsupported', `the ZIP entry ${name} uses compression method ${entry.method}`);
    const remaining = this.maxInflatedBytes - this.inflated;
    let out: Uint8Array;
    try {
      out = inflateRawSync(data, { maxOutputLength: Math.max(1, remaining) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') this.count(remaining + 1);
      throw new ExtractionError('corrupt', `the ZIP entry ${name} does not inflate: ${(error as Error).message}`, { cause: error });
    }
    this.count(out.length);
    return out;
  }

  readText(name: string): string {
    return new TextDecoder().decode(this.read(name));
  }

  private count(n: number): void {
    this.inflated += n;
    if (this.inflated > this.maxInflatedBytes) {
      throw new ExtractionError(
        'too_large',
        `the document inflates to more than ${Math.round(this.maxInflatedBytes / 1024 / 1024)} MB (a decompression bomb?)`,
      );
    }
  }
}
