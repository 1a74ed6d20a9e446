import type { NatsConnection } from '@nats-io/nats-core';
import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj';
import { ObjectBuckets, type BlobRef } from '@memex/contracts';
import { collect, measuring, type BlobSource, type BlobStore } from './port';

/** The chunk size objects are split into on the bus (well under any `max_payload`). */
const CHUNK_BYTES = 128 * 1024;

/**
 * The embedded blob store: a JetStream Object Store bucket on the same nats-server as everything
 * else (file storage, replicated like the streams). Deleting an object purges its chunk messages;
 * content is sealed with the memo's key before it gets here, so purged-but-not-compacted blocks hold
 * only ciphertext whose key is gone.
 */
export class NatsBlobStore implements BlobStore {
  readonly kind = 'nats' as const;
  private constructor(private readonly os: ObjectStore) {}

  static async open(nc: NatsConnection, { replicas = 1, bucket = ObjectBuckets.blobs }: { replicas?: number; bucket?: string } = {}): Promise<NatsBlobStore> {
    // Objects' SHA-256 (computed on put, checked on get) by node:crypto, not nats.js's default pure-JS
    // hash, which holds the event loop for a large object (process-wide; same digests).
    setSha256Backend('native');
    const os = await new Objm(nc).create(bucket, { storage: 'file', replicas });
    return new NatsBlobStore(os);
  }

  async put(name: string, data: BlobSource): Promise<BlobRef> {
    const measured = measuring(data);
    const iterator = measured.chunks[Symbol.asyncIterator]();
    let pending: Uint8Array | undefined;
    let offset = 0;
    // Re-slice whatever the caller yields into bus-sized chunks; a pull stream keeps memory bounded.
    const readable = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          if (pending && offset < pending.byteLength) {
            const end = Math.min(pending.byteLength, offset + CHUNK_BYTES);
            controller.enqueue(pending.subarray(offset, end));
            offset = end;
            return;
          }
          const next = await iterator.next();
          if (next.done) {
            controller.close();
            return;
          }
          pending = next.value;
          offset = 0;
        }
      },
    });
    await this.os.put({ name, options: { max_chunk_size: CHUNK_BYTES } }, readable);
    return measured.ref(name);
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    const chunks = await this.stream(name);
    return chunks ? collect(chunks) : undefined;
  }

  async stream(name: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const result = await this.os.get(name);
    if (!result) return undefined;
    const { data, error } = result;
    return (async function* () {
      const reader = data.getReader();
      let finished = false;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          yield value;
        }
        finished = true;
      } finally {
        // A reader left early cancels the rest. (Not `releaseLock()` on every read: Node builds its
        // "released" error's stack then, and the first stack a process builds parses the bundle's
        // source map, a pause in which the process answers nothing.)
        if (!finished) await reader.cancel().catch(() => undefined);
      }
      const failed = await error;
      if (failed) throw failed;
    })();
  }

  async delete(name: string): Promise<boolean> {
    const info = await this.os.info(name);
    if (!info || info.deleted) return false;
    await this.os.delete(name);
    return true;
  }

  async exists(name: string): Promise<boolean> {
    const info = await this.os.info(name);
    return info !== null && !info.deleted;
  }

  async close(): Promise<void> {}
}
