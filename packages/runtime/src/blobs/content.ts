import type { NatsConnection } from '@nats-io/nats-core';
import { INLINE_CONTENT_MAX_BYTES, contentBlobName, type ContentRef } from '@memex/contracts';
import { uuidV7 } from '../ids/ids';
import type { Keyring } from '../keyring/keyring';
import { mongoDriver } from '../mongo/driver';
import type { BlobStore } from './port';

/**
 * Memo content sealed with the memo's key: inline in the reference when small, else in the blob
 * store (claim-check). Readers do not care which.
 */
export class ContentStore {
  constructor(
    readonly blobs: BlobStore,
    readonly keyring: Keyring,
    private readonly inlineMaxBytes = INLINE_CONTENT_MAX_BYTES,
  ) {}

  /** Seals and stores one content revision (a fresh blob name when it goes to the blob store); the memo's key must exist. */
  async write(projectId: string, memoId: string, content: string): Promise<ContentRef> {
    const plain = Buffer.from(content, 'utf8');
    const digest = await this.keyring.digest(projectId, memoId, plain);
    const sealed = await this.keyring.seal(projectId, memoId, plain);
    if (plain.byteLength <= this.inlineMaxBytes) return { inline: sealed.toString('base64'), length: content.length, digest };
    const blob = await this.blobs.put(contentBlobName(projectId, memoId, uuidV7()), sealed);
    return { blob, length: content.length, digest };
  }

  /**
   * The plaintext bytes (UTF-8) of a revision, or `undefined` when its blob is gone (replaced or
   * erased). Throws `KeyErasedError` once the memo's key is shredded.
   */
  async readBytes(projectId: string, memoId: string, ref: ContentRef): Promise<Buffer | undefined> {
    if (ref.inline !== undefined) return this.keyring.open(projectId, memoId, Buffer.from(ref.inline, 'base64'));
    if (!ref.blob) return undefined;
    const sealed = await this.blobs.get(ref.blob.name);
    if (!sealed) return undefined;
    return this.keyring.open(projectId, memoId, sealed);
  }

  async read(projectId: string, memoId: string, ref: ContentRef): Promise<string | undefined> {
    return (await this.readBytes(projectId, memoId, ref))?.toString('utf8');
  }

  /** Removes a revision's blob, if it has one (inline content goes with the events and rows that hold it). */
  async remove(ref: ContentRef | undefined): Promise<void> {
    if (ref?.blob) await this.blobs.delete(ref.blob.name);
  }
}

/** The blob store configuration picks: GridFS with MONGODB_URL, else the JetStream Object Store. */
export async function openBlobStore(
  nc: NatsConnection,
  config: { MONGODB_URL?: string | undefined; MONGODB_DB?: string | undefined; MEMEX_NATS_REPLICAS?: number },
): Promise<BlobStore> {
  if (config.MONGODB_URL) {
    const { MongoClient } = await mongoDriver();
    const { GridFsBlobStore } = await import('./gridfs');
    const client = await new MongoClient(config.MONGODB_URL, { writeConcern: { w: 'majority' } }).connect();
    const store = await GridFsBlobStore.open(client.db(config.MONGODB_DB ?? 'memex'));
    return Object.assign(store, { close: () => client.close() });
  }
  const { NatsBlobStore } = await import('./nats');
  return NatsBlobStore.open(nc, { replicas: config.MEMEX_NATS_REPLICAS ?? 1 });
}
