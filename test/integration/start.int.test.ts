/**
 * `pnpm start` as a user runs it from a terminal: it starts its own nats-server with the store in the
 * data dir (never joining another NATS), names it in the ready line, logs each request once (its own
 * readiness polls not at info), makes every file under the data dir private, and a Ctrl-C (SIGINT to
 * the whole process group, as a terminal sends it) ends it cleanly, with exit code 0 and no
 * "ELIFECYCLE Command failed" from pnpm. A setting a service refuses stops it all at once, with the
 * message and exit code 78, rather than a restart loop; a gateway port already taken stops it before
 * anything starts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CONFIG } from '@memex/runtime';
import { eventually, freePort, tempDir } from '@memex/testing';
import { httpsJson } from '../support/https';
import { REPO_ROOT } from '../support/paths';

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? [path, ...walk(path)] : [path];
  });
}

describe('pnpm start', () => {
  it('runs its own NATS in the data dir, logs each request once, keeps files private, and stops cleanly on Ctrl-C', async () => {
    const dir = tempDir('memex-start-');
    const port = await freePort();
    const monitorPort = await freePort();
    const taken4222 = await listening(4222);
    const env: Record<string, string> = {
      ...process.env,
      MEMEX_DATA_DIR: dir.path,
      MEMEX_PORT: String(port),
      MEMEX_NATS_MONITOR_PORT: String(monitorPort),
      LOG_LEVEL: 'info',
    } as Record<string, string>;
    delete env.NATS_URL;
    delete env.MEMEX_NATS_PORT;
    // Its own process group, like a terminal's foreground job: a Ctrl-C signals every process in it.
    const child = spawn('pnpm', ['start'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    process.once('exit', killGroup);
    try {
      const ready = await eventually(() => /\[memex\] ready: (.*)/.exec(output)?.[1], 120_000, 100);
      const named = /NATS (nats:\/\/127\.0\.0\.1:(\d+)) \(started by memex, store ([^)]+)\)/.exec(ready);
      expect(named, ready).not.toBeNull();
      const [, url, natsPort, store] = named!;
      expect(store).toBe(join(dir.path, 'nats'));
      if (taken4222) expect(Number(natsPort), 'another server has 4222: not joined').not.toBe(4222);
      expect(readFileSync(join(dir.path, 'nats.url'), 'utf8').trim()).toBe(url);
      const pid = Number(readFileSync(join(dir.path, 'nats', 'nats-server.pid'), 'utf8'));
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain(join(dir.path, 'nats'));
      expect(walk(join(dir.path, 'nats', 'jetstream')).length).toBeGreaterThan(0);
      // MEMEX_NATS_MONITOR_PORT: nats-server's monitoring, on the loopback address NATS listens on.
      const varz = (await (await fetch(`http://127.0.0.1:${monitorPort}/varz`)).json()) as { port: number; jetstream?: unknown };
      expect(varz.port).toBe(Number(natsPort));
      expect(varz.jetstream).toBeDefined();
      expect(output).toContain(`monitoring http://127.0.0.1:${monitorPort}`);

      // One line per request; the readiness polls before "ready" were not logged at info.
      const ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
      expect((await httpsJson('GET', `https://localhost:${port}/docs/json`, { ca })).status).toBe(200);
      await eventually(() => output.includes('"route":"/docs/json"'), 5_000);
      const lines = output.split('\n').filter((l) => l.includes('"service":"gateway"'));
      expect(lines.filter((l) => l.includes('"route":"/docs/json"'))).toHaveLength(1);
      expect(lines.filter((l) => l.includes('/readyz'))).toEqual([]);
      expect(output).not.toMatch(/incoming request|request completed/);

      // Everything under the data dir is the user's alone.
      const open = [dir.path, ...walk(dir.path)].filter((p) => (statSync(p).mode & 0o077) !== 0);
      expect(open.map((p) => `${p} ${(statSync(p).mode & 0o777).toString(8)}`)).toEqual([]);

      process.kill(-child.pid!, 'SIGINT');
      const { code, signal } = await Promise.race([
        exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit after Ctrl-C:\n${output}`)), 30_000)),
      ]);
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(output).toContain('[memex] stopped');
      expect(output).not.toMatch(/ELIFECYCLE|Command failed/);
      await eventually(() => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 10_000);
    } finally {
      // On a failure: SIGTERM lets the start script stop its services and nats-server, then the rest goes.
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid!, 'SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      }
      killGroup();
      process.off('exit', killGroup);
      dir.remove();
    }
  }, 180_000);

  it('refuses to start when a gateway port is taken, naming it, before starting anything', async () => {
    const dir = tempDir('memex-start-port-');
    const holder = createServer();
    const held = await new Promise<number>((resolve) => holder.listen(0, '0.0.0.0', () => resolve((holder.address() as AddressInfo).port)));
    try {
      for (const [settings, text] of [
        [{ MEMEX_PORT: String(held) }, `port ${held} (MEMEX_PORT) is in use`],
        [{ MEMEX_PORT: String(await freePort()), MEMEX_HEALTH_PORT: String(held) }, `port ${held} (MEMEX_HEALTH_PORT) is in use`],
      ] as const) {
        const env = { ...process.env, MEMEX_DATA_DIR: dir.path, ...settings } as Record<string, string>;
        delete env.NATS_URL;
        const run = spawnSync('pnpm', ['start'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 });
        const output = run.stdout + run.stderr;
        expect(run.status, output).toBe(1);
        expect(output).toContain(`[memex] failed to start: ${text}`);
        expect(output).not.toContain('starting nats-server');
      }
    } finally {
      holder.close();
      dir.remove();
    }
  }, 150_000);

  it.each([
    ['in separate processes', [] as string[], { INDEXER_WRITE_TURN_MS: '-3' }, /Invalid configuration: INDEXER_WRITE_TURN_MS = "-3"/, 'indexer#0'],
    ['in one process', ['--single-process'], { MEMEX_TLS_CERT: '/nowhere/cert.pem' }, /Invalid configuration: MEMEX_TLS_CERT and MEMEX_TLS_KEY must be set together/, 'all-in-one#0'],
  ])('%s: stops at once with exit code 78 when a service refuses its configuration, naming the setting, instead of restarting it in a loop', async (_, args, settings, message, who) => {
    const dir = tempDir('memex-start-config-');
    const env: Record<string, string> = { ...process.env, MEMEX_DATA_DIR: dir.path, MEMEX_PORT: String(await freePort()), ...settings } as Record<string, string>;
    delete env.NATS_URL;
    const child = spawn('pnpm', ['start', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      const code = await Promise.race([
        new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c))),
        // (a restart loop would back off and run past this)
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running after 60 s:\n${output}`)), 60_000)),
      ]);
      expect(code, output).toBe(EXIT_CONFIG);
      expect(output).toMatch(message);
      expect(output).toContain(`[memex] ${who} refused its configuration`);
      expect(output).toContain('[memex] stopped');
      expect(output).not.toContain('restarting in');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      dir.remove();
    }
  }, 90_000);
});
