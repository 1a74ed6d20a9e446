import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { getSha256Backend } from '@nats-io/obj';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServerHandle } from '@memex/testing';
import { connectNats } from '../nats/connection';
import { blobStoreContract } from './contract';
import { NatsBlobStore } from './nats';

describe('blob store: JetStream Object Store', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'blobs' });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  blobStoreContract('JetStream Object Store', async () => {
    const bucket = `blobs_${randomUUID().replaceAll('-', '')}`;
    const store = await NatsBlobStore.open(nc, { bucket });
    return { store, dispose: () => store.close() };
  });

  it("hashes objects with node:crypto, not nats.js's pure-JS SHA-256 (~50 ms of one turn for 2 MB)", async () => {
    const store = await NatsBlobStore.open(nc, { bucket: `blobs_${randomUUID().replaceAll('-', '')}` });
    expect(getSha256Backend()).toBe('native');
    await store.close();
  });
});
