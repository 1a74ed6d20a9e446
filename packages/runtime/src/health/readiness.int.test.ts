import { spawn, type ChildProcess } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { MemexError } from '@memex/contracts';
import { eventually, freePort, tempDir, waitForPort } from '@memex/testing';
import { CommandClient } from '../commands/client';
import { serveHealth } from './health';
import { connectNats, natsConnected } from '../nats/connection';
import { ensureTopology } from '../nats/topology';
import { readinessProbe } from './readiness';

/** A nats-server that can be killed and started again on the same port and store. */
function natsServer(port: number, storeDir: string) {
  let child: ChildProcess | undefined;
  return {
    async start() {
      child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
      const c = child;
      process.once('exit', () => c.kill('SIGKILL'));
      await waitForPort(port);
    },
    async kill() {
      const c = child!;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    },
  };
}

describe('when NATS dies', () => {
  it('readiness drops on the next probe, writes are refused at once with ServiceUnavailable, and both recover', async () => {
    const port = await freePort();
    const store = tempDir('memex-readiness-');
    const server = natsServer(port, store.path);
    await server.start();
    const nc = await connectNats({ url: `nats://127.0.0.1:${port}`, name: 'readiness-test' });
    try {
      await ensureTopology(await jetstreamManager(nc));
      for (const service of ['memo', 'indexer', 'agent'] as const) serveHealth(nc, service, `${service}-1`, async () => ({ ready: true }));
      const probe = readinessProbe(nc, ['memo', 'indexer', 'agent']);
      expect((await probe()).ready).toBe(true);
      const commands = new CommandClient(nc, 10_000);

      await server.kill();
      // The socket closes at once when the server dies; the very next probe says so (no cached "ready").
      await eventually(() => !natsConnected(nc), 1_000, 5);
      expect(await probe()).toMatchObject({ ready: false, nats: false });
      const started = Date.now();
      const refused = await commands
        .send('create', {} as never)
        .then(() => undefined, (error: unknown) => error);
      expect(refused).toBeInstanceOf(MemexError);
      expect((refused as MemexError).code).toBe('ServiceUnavailable');
      // Refused, not waited out: far below the 10 s command timeout.
      expect(Date.now() - started).toBeLessThan(1_000);

      await server.start();
      await eventually(async () => (await probe()).ready, 15_000, 50);
      commands.close();
    } finally {
      await nc.close();
      await server.kill().catch(() => undefined);
      store.remove();
    }
  }, 60_000);
});
