/**
 * `pnpm start`: the whole stack on one machine, each service its own process.
 *
 *   pnpm start [--scale gateway=2,indexer=2,agent=2,memo=1,search=1] [--single-process] [--no-restart]
 *
 * `search=N` adds N search-only indexer processes (INDEXER_ROLE=search, default 0): they answer
 * searches from the index the indexers write, off the event loop that chunks and embeds.
 * `--single-process` runs every service in one Node process (scripts/allInOne.ts): least memory,
 * no scaling.
 *
 * NATS: without NATS_URL, starts its own nats-server with JetStream, its store in MEMEX_DATA_DIR/nats,
 * on MEMEX_NATS_PORT (default 4222, or a free port when 4222 is taken), and writes its URL to
 * MEMEX_DATA_DIR/nats.url for the `memex` CLI. With NATS_URL, uses that server (and starts one there
 * only if the address is local and nothing answers). A nats-server this script started is supervised:
 * when it dies it is restarted with backoff on the same port and store, and the services reconnect.
 *
 * Extra gateway instances listen on MEMEX_PORT+1, +2, ... (and MEMEX_HEALTH_PORT+1, +2, ...: that
 * variable is the gateways' operator port here, /readyz and /metrics for the whole stack; the other
 * processes get none). Ctrl-C stops everything and exits 0; a
 * service that dies is restarted (unless --no-restart: then its work is left to the other instances,
 * as when a machine is lost). Files made under the data dir are private to the user (umask 077).
 *
 * The services run as JavaScript compiled from the sources at each start (deploy/bundle.ts
 * bundleInPlace, about a second), with plain node: no TypeScript loader in every process; so does
 * this script under `pnpm start` (compiled to dist/start.mjs first, scripts/compile-start.ts). Set
 * MEMEX_FROM_SOURCE=1 to run the TypeScript sources through tsx instead. MEMEX_NODE_FLAGS adds node
 * flags to every service process (space-separated, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, which
 * NODE_OPTIONS refuses).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { connect, createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EXIT_CONFIG } from '@memex/runtime/exitCodes';
import { bundleInPlace } from '../deploy/bundle';

type Service = 'memo' | 'indexer' | 'agent' | 'extractor' | 'gateway';
const SERVICES: Service[] = ['memo', 'indexer', 'agent', 'extractor', 'gateway'];
/** What `--scale` counts: the services, and `search`, indexer processes that only answer searches. */
type Scaled = Service | 'search';
const SCALED: Scaled[] = [...SERVICES, 'search'];
/** `--single-process`: every service in one process (scripts/allInOne.ts). */
const ALL_IN_ONE = 'all-in-one';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where `pnpm start` writes the URL of the nats-server it started; the CLI reads it. */
export const NATS_URL_FILE = 'nats.url';

function log(message: string): void {
  console.error(`[memex] ${message}`);
}

export function parseScale(spec: string | undefined): Record<Scaled, number> {
  const scale: Record<Scaled, number> = { memo: 1, indexer: 1, agent: 1, extractor: 1, gateway: 1, search: 0 };
  if (!spec) return scale;
  for (const part of spec.split(',').filter(Boolean)) {
    const [name, count] = part.split('=');
    const least = name === 'search' ? 0 : 1;
    if (!SCALED.includes(name as Scaled) || !/^\d+$/.test(count ?? '') || Number(count) < least || Number(count) > 16) {
      throw new Error(`--scale takes service=count pairs (${SERVICES.join(', ')}: 1-16 each; search: 0-16), got "${part}"`);
    }
    scale[name as Scaled] = Number(count);
  }
  return scale;
}

/** Restart delay after the n-th quick failure in a row: 250 ms doubling, at most 10 s. */
export function natsRestartDelay(failures: number): number {
  return Math.min(10_000, 250 * 2 ** Math.min(failures, 6));
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

function freePort(host: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolvePromise(address.port) : reject(new Error('no free port'))));
    });
  });
}

/** Why a gateway could not bind `port` on `host` (`EADDRINUSE`, `EACCES`…), or undefined when it could. */
function bindError(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    const srv = createServer();
    srv.once('error', (error: NodeJS.ErrnoException) => resolvePromise(error.code ?? error.message));
    srv.listen(port, host, () => srv.close(() => resolvePromise(undefined)));
  });
}

/**
 * The gateways' HTTPS and operator ports, checked before anything starts: a gateway that cannot
 * bind its port would only crash and be restarted until the port is freed.
 */
async function checkGatewayPorts(port: number, operatorPort: number | undefined, gateways: number): Promise<void> {
  const host = process.env.MEMEX_HOST || '0.0.0.0';
  for (let n = 0; n < gateways; n++) {
    for (const [variable, base] of [['MEMEX_PORT', port], ['MEMEX_HEALTH_PORT', operatorPort]] as const) {
      // (a port that is no port at all is left to the gateway, which refuses it with its message)
      if (base === undefined) continue;
      const error = isPort(base + n) ? await bindError(base + n, host) : undefined;
      const which = n === 0 ? variable : `${variable} + ${n}, for gateway #${n}`;
      if (error === 'EADDRINUSE') throw new Error(`port ${base + n} (${which}) is in use on ${host}: stop what listens there, or set ${variable} to a free port`);
      if (error === 'EACCES') throw new Error(`port ${base + n} (${which}) needs privileges this user lacks on ${host}: set ${variable} to a port above 1023`);
    }
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return false;
}

function readyz(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 2_000 },
      (res) => {
        res.resume();
        resolvePromise(res.statusCode === 200);
      },
    );
    req.on('error', () => resolvePromise(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** A path under the working directory relative to it, any other absolute. */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A nats-server left running on this store by an earlier run that was killed outright (its pid file
 * says so): stopped, so two servers never share one store.
 */
async function stopLeftoverNats(pidFile: string, storeDir: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return;
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return;
  }
  if (!cmdline.includes('nats-server') || !cmdline.includes(storeDir)) return;
  log(`stopping the nats-server (pid ${pid}) an earlier run left on ${storeDir}`);
  process.kill(pid, 'SIGTERM');
  if (!(await waitFor(async () => !processAlive(pid), 10_000, 100))) process.kill(pid, 'SIGKILL');
}

interface NatsChoice {
  url: string;
  /** Set when this script runs the server: where, and its store. */
  own?: { host: string; port: number; storeDir: string; monitorPort?: number };
}

/** Whether `n` is a TCP port number (1-65535). */
function isPort(n: number): boolean {
  return Number.isInteger(n) && n > 0 && n < 65536;
}

/** A port from the environment variable `name`, or undefined when it is unset. */
function portSetting(name: string): number | undefined {
  const raw = process.env[name];
  if (!raw) return undefined;
  const port = Number(raw);
  if (!isPort(port)) throw new Error(`${name} must be a port number, got "${raw}"`);
  return port;
}

async function chooseNats(dataDir: string): Promise<NatsChoice> {
  const storeDir = join(dataDir, 'nats');
  // nats-server's HTTP monitoring (/varz, /connz, /jsz), on the address it listens on: off unless asked for.
  const monitorPort = portSetting('MEMEX_NATS_MONITOR_PORT');
  const given = process.env.NATS_URL;
  if (given) {
    const first = new URL(given.split(',')[0]!.trim());
    const host = first.hostname || '127.0.0.1';
    const port = Number(first.port || 4222);
    if (await reachable(host, port)) return { url: given };
    if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new Error(`no NATS server answers at ${given}`);
    return { url: given, own: { host: host === 'localhost' ? '127.0.0.1' : host, port, storeDir, ...(monitorPort ? { monitorPort } : {}) } };
  }
  const host = '127.0.0.1';
  const wanted = portSetting('MEMEX_NATS_PORT');
  let port = wanted ?? 4222;
  if (await reachable(host, port)) {
    if (wanted !== undefined) throw new Error(`MEMEX_NATS_PORT ${wanted} is taken; free it or choose another`);
    // Something else (another NATS, another stack) has 4222: never join it, take a free port.
    port = await freePort(host);
  }
  return { url: `nats://${host}:${port}`, own: { host, port, storeDir, ...(monitorPort ? { monitorPort } : {}) } };
}

/**
 * Runs nats-server and restarts it when it dies: 250 ms, then doubling up to 10 s while it keeps
 * failing fast; a run that lasted a minute resets the backoff. Its own process group, so a Ctrl-C in
 * the terminal reaches this script, which stops the services before NATS.
 */
class NatsSupervisor {
  private child: ChildProcess | undefined;
  private stopping = false;
  private failures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  readonly pidFile: string;
  readonly logFile: string;

  constructor(private readonly own: NonNullable<NatsChoice['own']>) {
    this.pidFile = join(own.storeDir, 'nats-server.pid');
    this.logFile = join(own.storeDir, 'nats-server.log');
  }

  async start(): Promise<void> {
    this.spawn();
    if (!(await waitFor(() => reachable(this.own.host, this.own.port), 10_000, 50))) {
      throw new Error(`nats-server did not start on ${this.own.host}:${this.own.port}; see ${this.logFile}`);
    }
  }

  private spawn(): void {
    const { host, port, storeDir, monitorPort } = this.own;
    const monitor = monitorPort ? ['-m', String(monitorPort)] : [];
    const child = spawn('nats-server', ['-a', host, '-p', String(port), ...monitor, '-js', '-sd', storeDir, '-l', this.logFile, '-P', this.pidFile], {
      stdio: 'ignore',
      detached: true,
    });
    this.child = child;
    const startedAt = Date.now();
    child.once('error', (error) => log(`nats-server could not run: ${error.message}`));
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      this.failures = Date.now() - startedAt > 60_000 ? 0 : this.failures + 1;
      const delay = natsRestartDelay(this.failures - 1);
      log(`nats-server exited (${signal ?? `code ${code}`}); restarting it in ${delay} ms (see ${this.logFile})`);
      this.restartTimer = setTimeout(() => {
        if (this.stopping) return;
        this.spawn();
        const restarted = this.child;
        void waitFor(() => reachable(host, port), 10_000, 50).then((up) => {
          if (up && this.child === restarted) log(`nats-server is back on ${host}:${port} (pid ${restarted?.pid})`);
        });
      }, delay);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

let nats: NatsSupervisor | undefined;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scale: { type: 'string' }, 'single-process': { type: 'boolean' }, 'no-restart': { type: 'boolean' } },
    allowPositionals: false,
  });
  const restart = !values['no-restart'];
  const scale = parseScale(values.scale);
  const single = values['single-process'] === true;
  if (single && values.scale) throw new Error('--single-process runs one instance of each service: it cannot be combined with --scale');
  // Everything the stack writes under the data dir is the user's alone: keys, memos, the NATS store.
  process.umask(0o077);
  const dataDir = resolve(process.env.MEMEX_DATA_DIR || join(ROOT, 'data'));
  const port = Number(process.env.MEMEX_PORT || 8443);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);

  const operatorPort = process.env.MEMEX_HEALTH_PORT;
  await checkGatewayPorts(port, operatorPort ? Number(operatorPort) : undefined, single ? 1 : scale.gateway);

  const children = new Set<ChildProcess>();
  let stopping = false;

  const choice = await chooseNats(dataDir);
  const urlFile = join(dataDir, NATS_URL_FILE);
  if (choice.own) {
    if (spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
      throw new Error(`no nats-server on PATH to start (install it, e.g. apt-get install nats-server, or set NATS_URL)`);
    }
    mkdirSync(choice.own.storeDir, { recursive: true, mode: 0o700 });
    chmodSync(choice.own.storeDir, 0o700);
    nats = new NatsSupervisor(choice.own);
    await stopLeftoverNats(nats.pidFile, choice.own.storeDir);
    const monitoring = choice.own.monitorPort ? `; monitoring http://${choice.own.host}:${choice.own.monitorPort}` : '';
    log(`starting nats-server on ${choice.own.host}:${choice.own.port} (JetStream store ${choice.own.storeDir}; log ${nats.logFile}${monitoring})`);
    await nats.start();
    writeFileSync(urlFile, `${choice.url}\n`, { mode: 0o600 });
  } else {
    // The CLI must not find a URL of a server this run does not use.
    rmSync(urlFile, { force: true });
  }
  const natsLine = choice.own
    ? `NATS ${choice.url} (started by memex, store ${shortPath(choice.own.storeDir)})`
    : `NATS ${choice.url} (from NATS_URL)`;

  const env = {
    ...process.env,
    NATS_URL: choice.url,
    MEMEX_DATA_DIR: dataDir,
    MEMEX_MODELS_DIR: process.env.MEMEX_MODELS_DIR || join(ROOT, 'models'),
  };

  // Compiled for this start (per run, so two stacks of one checkout never share half-written files).
  const fromSource = process.env.MEMEX_FROM_SOURCE === '1';
  const bundles = fromSource ? undefined : mkdtempSync(join(tmpdir(), 'memex-start-'));
  if (bundles) {
    const startedAt = Date.now();
    await bundleInPlace(bundles, [
      ...(single ? [{ name: ALL_IN_ONE, entry: 'scripts/allInOne.ts' }] : SERVICES.map((service) => ({ name: service, entry: `services/${service}/src/main.ts` }))),
      { name: 'extractor-child', entry: 'services/extractor/src/sandbox/child.ts' },
    ]);
    log(`compiled the services in ${Date.now() - startedAt} ms`);
  }
  const nodeFlags = (process.env.MEMEX_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const command = (service: Service | typeof ALL_IN_ONE): string[] => [
    ...nodeFlags,
    ...(bundles
      ? ['--enable-source-maps', join(bundles, `${service}.mjs`)]
      : ['--import', 'tsx', service === ALL_IN_ONE ? join(ROOT, 'scripts', 'allInOne.ts') : join(ROOT, 'services', service, 'src', 'main.ts')]),
  ];

  // MEMEX_HEALTH_PORT is the gateway's operator port here (its /readyz and /metrics cover every
  // process, over NATS): the other processes of one machine would all bind it and fail.
  const backEnd = Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'MEMEX_HEALTH_PORT'));
  const launch = (service: Scaled | typeof ALL_IN_ONE, n: number, attempt = 0): void => {
    const childEnv =
      service === 'gateway' || service === ALL_IN_ONE
        ? { ...env, MEMEX_PORT: String(port + n), ...(operatorPort ? { MEMEX_HEALTH_PORT: String(Number(operatorPort) + n) } : {}) }
        : service === 'search'
          ? { ...backEnd, INDEXER_ROLE: 'search' }
          : backEnd;
    // Own process group: a Ctrl-C reaches this script alone, which stops each service once.
    const child = spawn(process.execPath, command(service === 'search' ? 'indexer' : service), { cwd: ROOT, env: childEnv, stdio: 'inherit', detached: true });
    children.add(child);
    const startedAt = Date.now();
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (stopping) return;
      // A refused setting (its message is above): restarting cannot help, so the stack stops.
      if (code === EXIT_CONFIG) {
        log(`${service}#${n} refused its configuration (see above); stopping: fix the setting and start again`);
        void stop('configuration', EXIT_CONFIG);
        return;
      }
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

  const stop = async (signal: string, exitCode = 0) => {
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
    await nats?.stop();
    if (choice.own) rmSync(urlFile, { force: true });
    if (bundles) rmSync(bundles, { recursive: true, force: true });
    log('stopped');
    process.exit(exitCode);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));

  if (single) launch(ALL_IN_ONE, 0);
  else for (const service of SCALED) for (let n = 0; n < scale[service]; n++) launch(service, n);

  if (await waitFor(() => readyz(port), 120_000)) {
    const gateways = Array.from({ length: scale.gateway }, (_, n) => `https://localhost:${port + n}`).join(', ');
    log(`ready: ${gateways}; ${natsLine}; API docs at https://localhost:${port}/docs; TLS certificate in ${join(dataDir, 'tls')}`);
    log('create a project and key:  pnpm -s memex project create --name my-project --json');
  } else {
    log(`not ready after 120 s (${natsLine}); see the logs above, or https://localhost:${port}/readyz`);
  }
}

main().catch(async (error: unknown) => {
  log(`failed to start: ${(error as Error).message}`);
  await nats?.stop().catch(() => undefined);
  process.exit(1);
});
