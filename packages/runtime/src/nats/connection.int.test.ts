import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { eventually, freePort, startNatsServer, tempDir, waitForPort } from '@memex/testing';
import { ConfigError } from '../configError';
import { createLogger } from '../logger';
import { connectNats } from './connection';

describe('connectNats with credentials', () => {
  it('logs in with a user and password, and fails without them', async () => {
    const nats = await startNatsServer(['--user', 'memex', '--pass', 's3cret']);
    try {
      await expect(connectNats({ url: nats.url, name: 'anonymous', timeoutMs: 2_000 })).rejects.toThrow(/auth/i);
      const nc = await connectNats({ url: nats.url, name: 'user', auth: { NATS_USER: 'memex', NATS_PASSWORD: 's3cret' } });
      await nc.flush();
      await nc.close();
    } finally {
      await nats.stop();
    }
  });

  it('logs in with a token', async () => {
    const nats = await startNatsServer(['--auth', 'tok-123']);
    try {
      await expect(connectNats({ url: nats.url, name: 'wrong', timeoutMs: 2_000, auth: { NATS_TOKEN: 'nope' } })).rejects.toThrow(/auth/i);
      const nc = await connectNats({ url: nats.url, name: 'token', auth: { NATS_TOKEN: 'tok-123' } });
      await nc.flush();
      await nc.close();
    } finally {
      await nats.stop();
    }
  });
});

describe('connectNats before the server is up', () => {
  const recordingLogger = () => {
    const lines: Array<{ level: string; msg: string; error?: string; nats?: string }> = [];
    const logger = createLogger({ service: 'test', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    return { lines, logger };
  };

  it('waits for a server that comes up later, saying once why it waits', async () => {
    const port = await freePort();
    const url = `nats://127.0.0.1:${port}`;
    const { lines, logger } = recordingLogger();
    const connecting = connectNats({ url, name: 'early', logger, waitForServer: true });
    await eventually(() => lines.some((l) => l.msg.startsWith('NATS not reachable')));
    // Two more tries fail before the server starts: still one line.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const store = tempDir('memex-nats-late-');
    const server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store.path], { stdio: 'ignore' });
    try {
      await waitForPort(port);
      const nc = await connecting;
      await nc.flush();
      const waiting = lines.filter((l) => l.msg.startsWith('NATS not reachable'));
      expect(waiting).toHaveLength(1);
      expect(waiting[0]).toMatchObject({ level: 'warn', nats: url, error: 'connection refused' });
      expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'NATS reached', nats: url });
      await nc.close();
    } finally {
      server.kill('SIGKILL');
      store.remove();
    }
  });

  it('fails at once without waitForServer (the CLI)', async () => {
    const port = await freePort();
    const started = Date.now();
    await expect(connectNats({ url: `nats://127.0.0.1:${port}`, name: 'cli' })).rejects.toThrow(/connection refused/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('does not wait when the server refuses the credentials: a ConfigError naming the settings', async () => {
    const nats = await startNatsServer(['--auth', 'tok-123']);
    try {
      const refused = connectNats({ url: nats.url, name: 'wrong', waitForServer: true, auth: { NATS_TOKEN: 'nope' } });
      await expect(refused).rejects.toBeInstanceOf(ConfigError);
      await expect(refused).rejects.toThrow(/refused the credentials .*NATS_TOKEN/);
    } finally {
      await nats.stop();
    }
  });
});
