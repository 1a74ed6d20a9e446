import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, describe, expect, it } from 'vitest';
import { Consumers } from '@memex/contracts';
import { eventually, freePort, natsServerAvailable, waitForPort } from '@memex/testing';
import { silentLogger } from '../logger';
import { connectNats } from './connection';
import { CONSUME_EXPIRES_MS, runConsumer } from './consumer';

const STREAM = 'TEST_RESTART';
const CONSUMER = Consumers.indexer;

describe.skipIf(!natsServerAvailable())('a consumer across a NATS restart', () => {
  const dirs: string[] = [];
  const servers: ChildProcess[] = [];
  afterAll(() => {
    for (const server of servers) server.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const startServer = async (port: number) => {
    const dir = mkdtempSync(join(tmpdir(), 'memex-nats-restart-'));
    dirs.push(dir);
    const server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    servers.push(server);
    await waitForPort(port);
    return server;
  };

  it('pulls again within seconds when its first check after the reconnect fails', async () => {
    const port = await freePort();
    const first = await startServer(port);
    const nc = await connectNats({ url: `nats://127.0.0.1:${port}`, name: 'restart' });
    const js = jetstream(nc);
    const topology = async () => {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: STREAM, subjects: ['test.restart.>'] });
      await jsm.consumers.add(STREAM, { durable_name: CONSUMER, ack_policy: AckPolicy.Explicit });
    };
    await topology();
    const seen: string[] = [];
    const runner = await runConsumer({
      js,
      stream: STREAM,
      consumer: CONSUMER,
      logger: silentLogger(),
      concurrency: 1,
      handle: async (msg) => {
        seen.push(msg.string());
        return { kind: 'ack' };
      },
    });
    try {
      await js.publish('test.restart.a', 'before');
      await eventually(() => seen.includes('before'));

      // The server dies and another comes up on its port without the stream: the client reconnects
      // and its check of the consumer fails, so it backs off before it pulls again.
      first.kill('SIGKILL');
      await startServer(port);
      await eventually(async () => (await topology().then(() => true).catch(() => false)) || undefined, 10_000, 200);
      const since = Date.now();
      await js.publish('test.restart.a', 'after');
      // The back-off is jitter(expires): 0.5-1.5 pull lifetimes, then a pull. With the client's
      // default 30 s lifetime this waits 15-45 s.
      await eventually(() => seen.includes('after'), 1.5 * CONSUME_EXPIRES_MS + 3_000, 50);
      expect(Date.now() - since).toBeLessThan(1.5 * CONSUME_EXPIRES_MS + 3_000);
    } finally {
      await runner.stop();
      await nc.close();
    }
  }, 60_000);
});
