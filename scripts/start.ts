/**
 * `pnpm start`: the whole stack on one machine, each service its own process.
 *
 *   pnpm start [--scale gateway=2,indexer=2,agent=2,memo=1] [--no-restart]
 *
 * Uses NATS at NATS_URL (default nats://127.0.0.1:4222). If none answers there and `nats-server` is
 * on PATH, starts one with JetStream, its store under MEMEX_DATA_DIR/nats. Extra gateway instances
 * listen on MEMEX_PORT+1, +2, ... Ctrl-C stops everything; a service that dies is restarted (unless
 * --no-restart: then its work is left to the other instances, as when a machine is lost).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

type Service = 'memo' | 'indexer' | 'agent' | 'extractor' | 'gateway';
const SERVICES: Service[] = ['memo', 'indexer', 'agent', 'extractor', 'gateway'];
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function log(message: string): void {
  console.error(`[memex] ${message}`);
}

export function parseScale(spec: string | undefined): Record<Service, number> {
  const scale: Record<Service, number> = { memo: 1, indexer: 1, agent: 1, extractor: 1, gateway: 1 };
  if (!spec) return scale;
  for (const part of spec.split(',').filter(Boolean)) {
    const [name, count] = part.split('=');
    if (!SERVICES.includes(name as Service) || !/^\d+$/.test(count ?? '') || Number(count) < 1 || Number(count) > 16) {
      throw new Error(`--scale takes service=count pairs (services: ${SERVICES.join(', ')}; 1-16 each), got "${part}"`);
    }
    scale[name as Service] = Number(count);
  }
  return scale;
}

function reachable(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

function readyz(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const req = request({ host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolvePromise(res.statusCode === 200);
    });
    req.on('error', () => resolvePromise(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: 'string' }, 'no-restart': { type: 'boolean' } }, allowPositionals: false });
  const restart = !values['no-restart'];
  const scale = parseScale(values.scale);
  const dataDir = resolve(process.env.MEMEX_DATA_DIR || join(ROOT, 'data'));
  const port = Number(process.env.MEMEX_PORT || 8443);
  const natsUrl = process.env.NATS_URL || 'nats://127.0.0.1:4222';
  mkdirSync(dataDir, { recursive: true });

  const children = new Set<ChildProcess>();
  let stopping = false;
  let natsServer: ChildProcess | undefined;

  const first = new URL(natsUrl.split(',')[0]!.trim());
  const natsHost = first.hostname || '127.0.0.1';
  const natsPort = Number(first.port || 4222);
  if (!(await reachable(natsHost, natsPort))) {
    const local = ['127.0.0.1', 'localhost', '::1'].includes(natsHost);
    if (!local || spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
      throw new Error(`no NATS server answers at ${natsUrl}, and there is no nats-server on PATH to start one`);
    }
    const storeDir = join(dataDir, 'nats');
    mkdirSync(storeDir, { recursive: true });
    log(`starting nats-server on ${natsHost}:${natsPort} (JetStream store ${storeDir})`);
    const natsLog = join(storeDir, 'nats-server.log');
    natsServer = spawn(
      'nats-server',
      ['-a', natsHost === 'localhost' ? '127.0.0.1' : natsHost, '-p', String(natsPort), '-js', '-sd', storeDir, '-l', natsLog],
      { stdio: 'ignore' },
    );
    log(`nats-server logs to ${natsLog}`);
    if (!(await waitFor(() => reachable(natsHost, natsPort), 10_000))) throw new Error('nats-server did not start');
  }

  const env = {
    ...process.env,
    NATS_URL: natsUrl,
    MEMEX_DATA_DIR: dataDir,
    MEMEX_MODELS_DIR: process.env.MEMEX_MODELS_DIR || join(ROOT, 'models'),
  };

  const launch = (service: Service, n: number, attempt = 0): void => {
    const entry = join(ROOT, 'services', service, 'src', 'main.ts');
    const childEnv = service === 'gateway' ? { ...env, MEMEX_PORT: String(port + n) } : env;
    const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: ROOT, env: childEnv, stdio: 'inherit' });
    children.add(child);
    const startedAt = Date.now();
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (stopping) return;
      if (!restart) {
        log(`${service}#${n} exited (${signal ?? code}); not restarting (--no-restart)`);
        return;
      }
      // Quick repeated crashes back off up to 30 s; a run that lasted a minute resets the count.
      const next = Date.now() - startedAt > 60_000 ? 0 : attempt + 1;
      const delay = Math.min(30_000, 500 * 2 ** Math.min(next, 6));
      log(`${service}#${n} exited (${signal ?? code}); restarting in ${delay} ms`);
      setTimeout(() => {
        if (!stopping) launch(service, n, next);
      }, delay);
    });
  };

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    const exits = [...children].map((c) => new Promise((r) => c.once('exit', r)));
    for (const c of children) c.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const c of children) c.kill('SIGKILL');
    }, 15_000);
    await Promise.all(exits);
    clearTimeout(timer);
    if (natsServer && natsServer.exitCode === null) {
      const exited = new Promise((r) => natsServer!.once('exit', r));
      natsServer.kill('SIGTERM');
      await exited;
    }
    log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  for (const service of SERVICES) for (let n = 0; n < scale[service]; n++) launch(service, n);

  if (await waitFor(() => readyz(port), 120_000)) {
    const gateways = Array.from({ length: scale.gateway }, (_, n) => `https://localhost:${port + n}`).join(', ');
    log(`ready: ${gateways} (API docs at https://localhost:${port}/docs; TLS certificate in ${join(dataDir, 'tls')})`);
    log('create a project and key:  pnpm memex project create --name my-project --json');
  } else {
    log(`not ready after 120 s; see the logs above, or https://localhost:${port}/readyz`);
  }
}

main().catch((error: unknown) => {
  log(`failed to start: ${(error as Error).message}`);
  process.exit(1);
});
