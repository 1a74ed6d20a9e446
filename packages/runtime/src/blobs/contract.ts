/**
 * The blob store contract: every adapter runs this suite (embedded always; GridFS when MongoDB is
 * reachable).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BlobStore } from './port';

interface BlobStoreFixture {
  store: BlobStore;
  dispose(): Promise<void>;
}

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function* inPieces(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, Math.min(bytes.byteLength, at + size));
}

export function blobStoreContract(name: string, fixture: () => Promise<BlobStoreFixture>): void {
  describe(`blob store contract: ${name}`, () => {
    const withStore = async (body: (store: BlobStore) => Promise<void>) => {
      const f = await fixture();
      try {
        await body(f.store);
      } finally {
        await f.dispose();
      }
    };

    it('puts bytes and reads them back whole and streamed, with a reference that describes them', () =>
      withStore(async (store) => {
        const bytes = randomBytes(300_000);
        const blobName = `content/p/${randomUUID()}/1`;
        const ref = await store.put(blobName, bytes);
        expect(ref).toEqual({ name: blobName, bytes: bytes.byteLength, sha256: sha(bytes) });
        expect(Buffer.from((await store.get(blobName))!).equals(bytes)).toBe(true);
        const parts: Buffer[] = [];
        for await (const chunk of (await store.stream(blobName))!) parts.push(Buffer.from(chunk));
        expect(parts.length).toBeGreaterThan(1);
        expect(Buffer.concat(parts).equals(bytes)).toBe(true);
      }));

    it('lets a reader stop after the first piece, and reads the object whole after', () =>
      withStore(async (store) => {
        const bytes = randomBytes(600_000);
        await store.put('early', bytes);
        for await (const chunk of (await store.stream('early'))!) {
          expect(Buffer.from(chunk).equals(bytes.subarray(0, chunk.byteLength))).toBe(true);
          break;
        }
        expect(Buffer.from((await store.get('early'))!).equals(bytes)).toBe(true);
      }));

    it('takes a stream of uneven pieces and keeps it byte for byte (20 MiB)', () =>
      withStore(async (store) => {
        const bytes = randomBytes(20 * 1024 * 1024);
        const ref = await store.put('big', inPieces(bytes, 1_000_003));
        expect(ref.bytes).toBe(bytes.byteLength);
        expect(ref.sha256).toBe(sha(bytes));
        expect(sha((await store.get('big'))!)).toBe(sha(bytes));
      }), 60_000);

    it('stores empty objects', () =>
      withStore(async (store) => {
        const ref = await store.put('empty', new Uint8Array(0));
        expect(ref.bytes).toBe(0);
        expect(await store.exists('empty')).toBe(true);
        expect((await store.get('empty'))!.byteLength).toBe(0);
      }));

    it('answers undefined/false for a missing object, and delete removes one', () =>
      withStore(async (store) => {
        expect(await store.get('missing')).toBeUndefined();
        expect(await store.stream('missing')).toBeUndefined();
        expect(await store.exists('missing')).toBe(false);
        expect(await store.delete('missing')).toBe(false);
        await store.put('gone', Buffer.from('to be deleted'));
        expect(await store.exists('gone')).toBe(true);
        expect(await store.delete('gone')).toBe(true);
        expect(await store.exists('gone')).toBe(false);
        expect(await store.get('gone')).toBeUndefined();
        expect(await store.delete('gone')).toBe(false);
      }));

    it('replaces an object put again under the same name', () =>
      withStore(async (store) => {
        await store.put('same', Buffer.from('first version, longer'));
        await store.put('same', Buffer.from('second'));
        expect(Buffer.from((await store.get('same'))!).toString()).toBe('second');
        expect(await store.delete('same')).toBe(true);
        expect(await store.exists('same')).toBe(false);
      }));

    it('keeps names apart, slashes and odd characters included', () =>
      withStore(async (store) => {
        const names = ['a/b/c', 'a/b', 'ümlaut name.txt', `x${'y'.repeat(200)}`];
        for (const n of names) await store.put(n, Buffer.from(`bytes of ${n}`));
        for (const n of names) expect(Buffer.from((await store.get(n))!).toString()).toBe(`bytes of ${n}`);
      }));
  });
}
