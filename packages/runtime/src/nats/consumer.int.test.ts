import { AckPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Consumers, Streams } from '@memex/contracts';
import { eventually, natsServerAvailable, startNatsServer, type NatsServerHandle } from '@memex/testing';
import { silentLogger } from '../logger';
import { connectNats } from './connection';
import { runConsumer, type ConsumerRunner, type Disposition } from './consumer';

const STREAM = 'TEST_BATCHES';
// Durable names are per stream: this one borrows the indexer's retry policy, on a test stream.
const CONSUMER = Consumers.indexer;
const MAX_DELIVER = 3;
const ids = (msgs: JsMsg[]) => msgs.map((m) => m.string());

describe.skipIf(!natsServerAvailable())('runConsumer with a batch handler', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  const runners: ConsumerRunner[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: Streams.deadLetters, subjects: ['memex.dlq.>'] });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });
  beforeEach(async () => {
    await jsm.streams.add({ name: STREAM, subjects: ['test.batch.>'] });
    await jsm.streams.purge(Streams.deadLetters);
    // As ensureTopology sets it up (max_deliver is the retry limit), with a short ack wait: a message
    // held by a dead process comes back within a second.
    await jsm.consumers.add(STREAM, { durable_name: CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(1_000), max_deliver: MAX_DELIVER });
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await jsm.streams.delete(STREAM);
  });

  const publish = async (names: string[]) => {
    for (const name of names) await js.publish(`test.batch.${name}`, name);
  };
  const settledAll = () =>
    eventually(async () => {
      const info = await jsm.consumers.info(STREAM, CONSUMER);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? info : undefined;
    }, 15_000);
  const start = async (options: {
    handle: (msg: JsMsg) => Promise<Disposition>;
    handleBatch: (msgs: JsMsg[]) => Promise<Disposition[]>;
    concurrency?: number;
    /** A connection that the test closes itself (a dead process): its runner is not stopped. */
    connection?: JetStreamClient;
  }) => {
    const runner = await runConsumer({
      js: options.connection ?? js,
      stream: STREAM,
      consumer: CONSUMER,
      logger: silentLogger(),
      concurrency: options.concurrency ?? 1,
      batchSize: 16,
      retry: { maxDeliver: MAX_DELIVER, backoffBaseMs: 10 },
      handle: options.handle,
      handleBatch: options.handleBatch,
    });
    if (!options.connection) runners.push(runner);
    return runner;
  };

  it('hands messages that arrived together to one call and acknowledges every one after it', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `m${i}`);
    // Fewer than a batch first: every idle worker wakes for them, one takes them all.
    await publish(names.slice(0, 5));
    const batches: string[][] = [];
    const single: string[] = [];
    await start({
      concurrency: 3,
      handle: async (msg) => {
        single.push(msg.string());
        return { kind: 'ack' };
      },
      handleBatch: async (msgs) => {
        batches.push(ids(msgs));
        await new Promise((r) => setTimeout(r, 5));
        return msgs.map(() => ({ kind: 'ack' }));
      },
    });
    await publish(names.slice(5));
    const info = await settledAll();
    expect(info.ack_floor.stream_seq).toBe(names.length);
    const handled = [...batches.flat(), ...single];
    expect(handled.sort()).toEqual([...names].sort());
    expect(Math.max(...batches.map((b) => b.length))).toBeGreaterThan(1);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(16);
  });

  it('handles the rest of a batch with one poisoned message and dead-letters only that one', async () => {
    const names = ['a', 'b', 'poison', 'c', 'd', 'e'];
    await publish(names);
    const done = new Map<string, number>();
    const isPoison = (msg: JsMsg) => msg.string() === 'poison';
    await start({
      handle: async (msg) => {
        if (isPoison(msg)) throw new Error('cannot digest this');
        done.set(msg.string(), (done.get(msg.string()) ?? 0) + 1);
        return { kind: 'ack' };
      },
      handleBatch: async (msgs) => {
        if (msgs.some(isPoison)) throw new Error('a message of the batch cannot be digested');
        for (const m of msgs) done.set(m.string(), (done.get(m.string()) ?? 0) + 1);
        return msgs.map(() => ({ kind: 'ack' }));
      },
    });
    await settledAll();
    expect([...done.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Each good message was completed once: the failed batch's were redone alone, not redelivered.
    expect([...done.values()].every((n) => n === 1)).toBe(true);
    const dead = await eventually(async () => {
      const info = await jsm.streams.info(Streams.deadLetters, { subjects_filter: 'memex.dlq.>' });
      return info.state.messages > 0 ? info : undefined;
    });
    expect(Object.keys(dead.state.subjects ?? {})).toEqual([`memex.dlq.${CONSUMER}.test.batch.poison`]);
    expect(dead.state.messages).toBe(1);
  });

  it('acknowledges nothing of a batch whose process dies mid-way: all of it is redelivered, nothing lost', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `m${i}`);
    await publish(names);
    // An idempotent effect, as real handlers are (a version check, a command id): applied once per message.
    const applied = new Set<string>();
    const redelivered: string[] = [];
    const doomed = await connectNats({ url: nats.url, name: 'doomed' });
    const first = new Promise<string[]>((resolveFirst) => {
      const die = async (msgs: JsMsg[]): Promise<never> => {
        // Half the batch is applied, then the process dies before the batch completes.
        for (const m of msgs.slice(0, Math.ceil(msgs.length / 2))) applied.add(m.string());
        resolveFirst(ids(msgs));
        await doomed.close();
        return new Promise<never>(() => undefined);
      };
      // (The first message can arrive alone; then it is a batch of one.)
      void start({ connection: jetstream(doomed), handle: (msg) => die([msg]), handleBatch: die });
    });
    const crashed = await first;
    expect(crashed.length).toBeGreaterThan(0);

    await start({
      handle: async (msg) => {
        if (msg.info.deliveryCount > 1) redelivered.push(msg.string());
        applied.add(msg.string());
        return { kind: 'ack' };
      },
      handleBatch: async (msgs) => {
        for (const m of msgs) {
          if (m.info.deliveryCount > 1) redelivered.push(m.string());
          applied.add(m.string());
        }
        return msgs.map(() => ({ kind: 'ack' }));
      },
    });
    await settledAll();
    expect([...applied].sort()).toEqual([...names].sort());
    // Every message of the unfinished batch came back, the ones applied before the crash included
    // (so did any the dead process had pulled but not started).
    expect(redelivered).toEqual(expect.arrayContaining(crashed));
  });
});
