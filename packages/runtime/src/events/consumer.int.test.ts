import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { Consumers, Headers, Streams, Subjects, type MemoEventMessage } from '@memex/contracts';
import { eventually, natsServerAvailable, startNatsServer, type NatsServerHandle } from '@memex/testing';
import { Keyring } from '../keyring/keyring';
import { createLogger, silentLogger } from '../logger';
import { encodeJson } from '../nats/codec';
import { connectNats } from '../nats/connection';
import { ensureTopology } from '../nats/topology';
import { consumeMemoEvents, settleEach, Slots } from './consumer';

describe('Slots and settleEach', () => {
  it('runs at most `size` tasks at once across callers, and reports each task\'s failure alone', async () => {
    const slots = new Slots(2);
    let running = 0;
    let most = 0;
    const task = async (n: number) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 2));
      running -= 1;
      if (n === 3) throw new Error('three');
    };
    const [a, b] = await Promise.all([settleEach([1, 2, 3], task, slots), settleEach([4, 5], task, slots)]);
    expect(most).toBe(2);
    expect(a.map((r) => (r ? String((r.error as Error).message) : 'done'))).toEqual(['done', 'done', 'three']);
    expect(b).toEqual([undefined, undefined]);
  });
});

describe.skipIf(!natsServerAvailable())('consumeMemoEvents in batches', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let keyring: Keyring;

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'test' });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureTopology(jsm, { retry: { maxDeliver: 3, backoffBaseMs: 10 } });
    keyring = await Keyring.open(nc);
  });
  afterAll(async () => {
    keyring?.close();
    await nc?.close();
    await nats?.stop();
  });

  const publish = async (projectId: string, type: MemoEventMessage['type'], version: number) => {
    const memoId = randomUUID();
    const event = { id: randomUUID(), type, version, occurredAt: new Date().toISOString(), data: { memoId, projectId }, memo: null } as MemoEventMessage;
    await js.publish(Subjects.memoEvents(projectId, memoId), encodeJson(event), { msgID: event.id });
    return memoId;
  };

  it('acks the types it ignores unhandled, and retries only the event that failed in a batch', async () => {
    const projectId = randomUUID();
    const wanted = await Promise.all([1, 2, 3, 4].map(() => publish(projectId, 'MemoCreated', 1)));
    const ignored = await Promise.all([1, 2].map(() => publish(projectId, 'MemoTagged', 3)));
    const flaky = wanted[2]!;
    const calls = new Map<string, number>();
    const runner = await consumeMemoEvents({
      js,
      consumer: Consumers.agent,
      logger: silentLogger(),
      concurrency: 1,
      batchSize: 16,
      types: ['MemoCreated'],
      keyring,
      retry: { maxDeliver: 3, backoffBaseMs: 10 },
      handleBatch: (events) =>
        settleEach(events, async ({ event }) => {
          const { memoId } = event.data as { memoId: string };
          const n = (calls.get(memoId) ?? 0) + 1;
          calls.set(memoId, n);
          if (memoId === flaky && n === 1) throw new Error('first try fails');
        }),
    });
    try {
      await eventually(async () => {
        const info = await jsm.consumers.info(Streams.memoEvents, Consumers.agent);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      }, 15_000);
      expect(Object.fromEntries(calls)).toEqual(Object.fromEntries(wanted.map((m) => [m, m === flaky ? 2 : 1])));
      for (const m of ignored) expect(calls.has(m)).toBe(false);
    } finally {
      await runner.stop();
    }
  });

  it('acks an ignored type by its header without parsing the body', async () => {
    const projectId = randomUUID();
    // A body no parser reads: had the consumer parsed it, it would log it as unreadable.
    const hdrs = natsHeaders();
    hdrs.set(Headers.eventType, 'MemoTagged');
    await js.publish(Subjects.memoEvents(projectId, randomUUID()), new TextEncoder().encode('{not json'), { msgID: randomUUID(), headers: hdrs });
    const wanted = await publish(projectId, 'MemoCreated', 1);
    const lines: string[] = [];
    const logger = createLogger({ service: 'test', level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const handled: string[] = [];
    const runner = await consumeMemoEvents({
      js,
      consumer: Consumers.extractor,
      logger,
      types: ['MemoCreated'],
      keyring,
      handle: async (event) => void handled.push((event.data as { memoId: string }).memoId),
    });
    try {
      await eventually(async () => {
        const info = await jsm.consumers.info(Streams.memoEvents, Consumers.extractor);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      }, 15_000);
      expect(handled).toContain(wanted);
      expect(lines.filter((l) => l.includes('unreadable'))).toEqual([]);
    } finally {
      await runner.stop();
    }
  });
});
