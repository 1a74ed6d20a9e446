import { createHash } from 'node:crypto';
import type { BlobRef } from '@memex/contracts';

/** Bytes to store: whole, or as a stream of chunks (never held whole by the adapter). */
export type BlobSource = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Where large bytes live (claim-check): memo content revisions and uploaded files. Messages carry a
 * `BlobRef`, never the bytes. Names are written once; `put` to an existing name replaces it.
 */
export interface BlobStore {
  readonly kind: 'nats' | 'gridfs';
  put(name: string, data: BlobSource): Promise<BlobRef>;
  /** The whole object, or `undefined` when there is none. */
  get(name: string): Promise<Uint8Array | undefined>;
  /** The object as a stream of chunks (bounded memory), or `undefined` when there is none. */
  stream(name: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** Removes the object; false when there was none. */
  delete(name: string): Promise<boolean>;
  exists(name: string): Promise<boolean>;
  close(): Promise<void>;
}

export class BlobIntegrityError extends Error {
  constructor(name: string, cause?: unknown) {
    super(`blob ${name} does not match its reference`, { cause });
    this.name = 'BlobIntegrityError';
  }
}

/** Passes chunks through while counting bytes and hashing them, for the `BlobRef` of a put. */
export function measuring(source: BlobSource): { chunks: AsyncIterable<Uint8Array>; ref(name: string): BlobRef } {
  const hash = createHash('sha256');
  let bytes = 0;
  async function* chunks(): AsyncIterable<Uint8Array> {
    if (source instanceof Uint8Array) {
      hash.update(source);
      bytes += source.byteLength;
      yield source;
      return;
    }
    for await (const chunk of source) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      yield chunk;
    }
  }
  return { chunks: chunks(), ref: (name) => ({ name, bytes, sha256: hash.digest('hex') }) };
}

/** Reads a stream of chunks into one buffer. */
export async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    total += chunk.byteLength;
  }
  return Buffer.concat(parts, total);
}

/** Checks bytes against the reference they were read by. */
export function verifyBlob(ref: BlobRef, bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength !== ref.bytes || createHash('sha256').update(bytes).digest('hex') !== ref.sha256) throw new BlobIntegrityError(ref.name);
  return bytes;
}
