import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Consumers, Streams, Subjects } from '@memex/contracts';
import { eventually, natsServerAvailable, startNatsServer, type NatsServerHandle } from '@memex/testing';
import { connectNats } from './connection';
import { ensureTopology } from './topology';

const EVENT_CONSUMERS = [Consumers.indexer, Consumers.indexerCatalog, Consumers.agent, Consumers.extractor, Consumers.feed];

describe.skipIf(!natsServerAvailable())('ensureTopology: the memo event stream', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeEach(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'test' });
    jsm = await jetstreamManager(nc);
  });
  afterEach(async () => {
    await nc?.close();
    await nats?.stop();
  });

  const messages = async () => (await jsm.streams.info(Streams.memoEvents)).state.messages;
  const ackAll = async (consumer: string) => {
    const batch = await jetstream(nc).consumers.get(Streams.memoEvents, consumer).then((c) => c.fetch({ max_messages: 10, expires: 1_000 }));
    for await (const msg of batch) msg.ack();
  };

  it('keeps a message only until every durable consumer has acknowledged it', async () => {
    await ensureTopology(jsm);
    expect((await jsm.streams.info(Streams.memoEvents)).config.retention).toBe(RetentionPolicy.Interest);
    await jetstream(nc).publish(Subjects.memoEvents('p1', 'm1'), 'event');
    expect(await messages()).toBe(1);
    // All consumers but the last done: the last has not seen it yet, so it stays.
    for (const consumer of EVENT_CONSUMERS.slice(0, -1)) await ackAll(consumer);
    await new Promise((r) => setTimeout(r, 200));
    expect(await messages()).toBe(1);
    await ackAll(EVENT_CONSUMERS.at(-1)!);
    await eventually(async () => (await messages()) === 0, 5_000);
  });

  it('brings a stream an older version made (limits retention, messages kept) up to date, or says why not', async () => {
    await jsm.streams.add({ name: Streams.memoEvents, subjects: [Subjects.memoEventsAll], retention: RetentionPolicy.Limits });
    await jsm.consumers.add(Streams.memoEvents, { durable_name: Consumers.indexer, ack_policy: AckPolicy.Explicit, filter_subject: Subjects.memoEventsAll });
    await jetstream(nc).publish(Subjects.memoEvents('p1', 'm1'), 'kept');
    const warn = vi.fn();
    await ensureTopology(jsm, { logger: { warn } });
    const after = await jsm.streams.info(Streams.memoEvents);
    const [major = 0, minor = 0] = (nc.info?.version ?? '0.0').split('.').map(Number);
    if (major > 2 || (major === 2 && minor >= 10)) {
      // NATS 2.10 changes retention in place.
      expect(after.config.retention).toBe(RetentionPolicy.Interest);
      expect(warn).not.toHaveBeenCalled();
    } else {
      expect(after.config.retention).toBe(RetentionPolicy.Limits);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]?.[1]).toMatch(/cannot change the stream's retention/);
    }
    // Nothing lost either way, and every consumer exists.
    expect(after.state.messages).toBe(1);
    for (const consumer of EVENT_CONSUMERS) expect((await jsm.consumers.info(Streams.memoEvents, consumer)).config.durable_name).toBe(consumer);
  });
});
