import { promisify } from 'node:util';
import { deflateRaw, deflateRawSync, inflateRaw, inflateRawSync } from 'node:zlib';

/** Shorter inputs are kept as they are (deflate's framing would eat the gain). */
const COMPRESS_MIN_BYTES = 128;
/** Larger inputs are compressed only if a sample of this size shrinks to at most 90%. */
const COMPRESS_SAMPLE_BYTES = 16 * 1024;

/**
 * The raw deflate of `bytes` if it is smaller than they are, else undefined (short inputs, and
 * large ones whose first 16 KiB do not shrink: already compressed files are not deflated again).
 * What stores data at rest compressed calls this, and inflates with `inflateRawSync`.
 */
export function deflateIfSmaller(bytes: Uint8Array): Buffer | undefined {
  if (!worthDeflating(bytes)) return undefined;
  const out = deflateRawSync(bytes);
  return out.byteLength < bytes.byteLength ? out : undefined;
}

function worthDeflating(bytes: Uint8Array): boolean {
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return false;
  if (bytes.byteLength <= 4 * COMPRESS_SAMPLE_BYTES) return true;
  const sample = bytes.subarray(0, COMPRESS_SAMPLE_BYTES);
  return deflateRawSync(sample, { level: 1 }).byteLength <= 0.9 * sample.byteLength;
}

/**
 * From this size, `deflateIfSmallerOffThread` and `inflateRawOffThread` work on libuv's thread
 * pool, not on the event loop's thread: deflating megabytes takes long enough that every other
 * request would wait for it. Below it, the hop to the pool costs more than it saves.
 */
export const OFF_THREAD_BYTES = 256 * 1024;
const deflateRawAsync = promisify(deflateRaw);
const inflateRawAsync = promisify(inflateRaw);

/** {@link deflateIfSmaller}, off the event loop's thread for large inputs. */
export async function deflateIfSmallerOffThread(bytes: Uint8Array): Promise<Buffer | undefined> {
  if (bytes.byteLength < OFF_THREAD_BYTES) return deflateIfSmaller(bytes);
  if (!worthDeflating(bytes)) return undefined;
  const out = await deflateRawAsync(bytes);
  return out.byteLength < bytes.byteLength ? out : undefined;
}

/** `inflateRawSync`, off the event loop's thread for large inputs (they inflate ~3× larger). */
export async function inflateRawOffThread(bytes: Uint8Array): Promise<Buffer> {
  return bytes.byteLength < OFF_THREAD_BYTES / 4 ? inflateRawSync(bytes) : inflateRawAsync(bytes);
}

/**
 * Text as a store keeps it at rest: the raw deflate of its UTF-8 as a Buffer (a SQLite BLOB) when
 * that is smaller, else the text itself. `decompressText` reads either, so rows written before a
 * store compressed (or too short to gain) stay readable.
 */
export function compressText(text: string): string | Buffer {
  return deflateIfSmaller(Buffer.from(text, 'utf8')) ?? text;
}

export function decompressText(stored: string | Buffer): string {
  return typeof stored === 'string' ? stored : inflateRawSync(stored).toString('utf8');
}
