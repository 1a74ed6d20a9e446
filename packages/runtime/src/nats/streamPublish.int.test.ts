import { jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsServerAvailable, startNatsServer, type NatsServerHandle } from '@memex/testing';
import { connectNats } from './connection';
import { fromNatsError } from './errors';
import { publishToStream } from './streamPublish';

describe.skipIf(!natsServerAvailable())('publishToStream', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'stream-publish-test' });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'PUBTEST', subjects: ['pubtest.>'] });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('stores a message and answers its stream and sequence; a repeated message id is stored once', async () => {
    const first = await publishToStream(nc, 'pubtest.a', new TextEncoder().encode('one'), { msgID: 'id-1' });
    expect(first).toEqual({ stream: 'PUBTEST', seq: 1, duplicate: false });
    const again = await publishToStream(nc, 'pubtest.a', new TextEncoder().encode('one'), { msgID: 'id-1' });
    expect(again).toEqual({ stream: 'PUBTEST', seq: 1, duplicate: true });
    const second = await publishToStream(nc, 'pubtest.b', new TextEncoder().encode('two'));
    expect(second.seq).toBe(2);
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info('PUBTEST')).state.messages).toBe(2);
    const stored = await jsm.streams.getMessage('PUBTEST', { seq: 1 });
    expect(new TextDecoder().decode(stored!.data)).toBe('one');
    expect(stored!.header.get('Nats-Msg-Id')).toBe('id-1');
  });

  it('fails as ServiceUnavailable where no stream takes the subject, and with JetStream\'s reason when it refuses', async () => {
    const none = await publishToStream(nc, 'nostream.x', new Uint8Array(), { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(fromNatsError(none, 'nostream.x').code).toBe('ServiceUnavailable');

    const hdrs = natsHeaders();
    hdrs.set('Nats-Expected-Stream', 'ANOTHER');
    const refused = await publishToStream(nc, 'pubtest.c', new Uint8Array([1]), { headers: hdrs }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/JetStream refused a publish to pubtest\.c: .*stream/i);
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info('PUBTEST')).state.messages).toBe(2);
  });
});
