import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db, GridFSBucket } from 'mongodb';
import type { BlobRef } from '@memex/contracts';
import { mongoDriver } from '../mongo/driver';
import { collect, measuring, type BlobSource, type BlobStore } from './port';

const BUCKET = 'memex_blobs';

/**
 * The MongoDB blob store (chosen with MONGODB_URL): GridFS in the memo database. A name maps to at
 * most one file: `put` writes the new file first and then removes older files of that name, so a
 * reader never sees a missing object. Deleted chunks leave the collection at once; WiredTiger may
 * keep their pages until it reuses them, which is why content arrives here sealed.
 */
export class GridFsBlobStore implements BlobStore {
  readonly kind = 'gridfs' as const;

  /** The store over a database's `bucketName` bucket (the driver is loaded here, not at import). */
  static async open(db: Db, bucketName = BUCKET): Promise<GridFsBlobStore> {
    const { GridFSBucket } = await mongoDriver();
    return new GridFsBlobStore(new GridFSBucket(db, { bucketName, chunkSizeBytes: 255 * 1024 }));
  }

  private constructor(private readonly bucket: GridFSBucket) {}

  async put(name: string, data: BlobSource): Promise<BlobRef> {
    const older = await this.bucket.find({ filename: name }, { projection: { _id: 1 } }).toArray();
    const measured = measuring(data);
    const upload = this.bucket.openUploadStream(name);
    await pipeline(Readable.from(measured.chunks), upload);
    for (const file of older) await this.bucket.delete(file._id).catch(() => undefined);
    return measured.ref(name);
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    const chunks = await this.stream(name);
    return chunks ? collect(chunks) : undefined;
  }

  async stream(name: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const latest = await this.bucket.find({ filename: name }).sort({ uploadDate: -1 }).limit(1).next();
    if (!latest) return undefined;
    return this.bucket.openDownloadStream(latest._id) as AsyncIterable<Uint8Array>;
  }

  async delete(name: string): Promise<boolean> {
    const files = await this.bucket.find({ filename: name }, { projection: { _id: 1 } }).toArray();
    for (const file of files) await this.bucket.delete(file._id);
    return files.length > 0;
  }

  async exists(name: string): Promise<boolean> {
    return (await this.bucket.find({ filename: name }, { projection: { _id: 1 } }).limit(1).next()) !== null;
  }

  async close(): Promise<void> {}
}
