import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INLINE_CONTENT_MAX_BYTES } from '@memex/contracts';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { Keyring, KeyErasedError } from '../keyring/keyring';
import { connectNats } from '../nats/connection';
import { ContentStore } from './content';
import { NatsBlobStore } from './nats';

describe('memo content: inline when small, a blob when large, sealed either way', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let store: ContentStore;
  let blobs: NatsBlobStore;
  const projectId = randomUUID();
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'content' });
    blobs = await NatsBlobStore.open(nc, { bucket: `content_${randomUUID().replaceAll('-', '')}` });
    store = new ContentStore(blobs, await Keyring.open(nc));
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('keeps content up to the limit inline (no blob), as ciphertext, and reads it back', async () => {
    const memoId = randomUUID();
    await store.keyring.create(projectId, memoId);
    const text = `Lighthouse log ✓ ${'x'.repeat(INLINE_CONTENT_MAX_BYTES - 100)}`;
    const put = blobs.put.bind(blobs);
    let puts = 0;
    blobs.put = (...args) => ((puts += 1), put(...args));
    const ref = await store.write(projectId, memoId, text).finally(() => (blobs.put = put));
    expect(puts).toBe(0);
    expect(ref.blob).toBeUndefined();
    expect(Buffer.from(ref.inline!, 'base64').toString('utf8')).not.toContain('Lighthouse log');
    expect(ref.length).toBe(text.length);
    expect(await store.read(projectId, memoId, ref)).toBe(text);
  });

  it('puts content above the limit in the blob store and removes it there', async () => {
    const memoId = randomUUID();
    await store.keyring.create(projectId, memoId);
    const text = 'y'.repeat(INLINE_CONTENT_MAX_BYTES + 1);
    const ref = await store.write(projectId, memoId, text);
    expect(ref.inline).toBeUndefined();
    expect(await blobs.exists(ref.blob!.name)).toBe(true);
    expect(await store.read(projectId, memoId, ref)).toBe(text);
    await store.remove(ref);
    expect(await blobs.exists(ref.blob!.name)).toBe(false);
    expect(await store.read(projectId, memoId, ref)).toBeUndefined();
  });

  it('makes inline content unreadable once the memo key is shredded', async () => {
    const memoId = randomUUID();
    await store.keyring.create(projectId, memoId);
    const ref = await store.write(projectId, memoId, 'a short secret memo');
    await store.keyring.shred(projectId, memoId);
    await expect(store.read(projectId, memoId, ref)).rejects.toBeInstanceOf(KeyErasedError);
  });
});
