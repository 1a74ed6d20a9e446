import { deflateRawSync, inflateRawSync } from 'node:zlib';

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
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return undefined;
  if (bytes.byteLength > 4 * COMPRESS_SAMPLE_BYTES) {
    const sample = bytes.subarray(0, COMPRESS_SAMPLE_BYTES);
    if (deflateRawSync(sample, { level: 1 }).byteLength > 0.9 * sample.byteLength) return undefined;
  }
  const out = deflateRawSync(bytes);
  return out.byteLength < bytes.byteLength ? out : undefined;
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
