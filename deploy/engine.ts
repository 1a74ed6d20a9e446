/**
 * Finds the container engine on this machine, for `pnpm images`, `pnpm compose:*` and
 * `pnpm test:containers`: a Docker daemon (`docker info` answers), or podman. With podman the
 * repository's podman settings apply (deploy/podman/containers.conf through CONTAINERS_CONF, unless
 * the caller set one), and `apiSocket()` starts podman's Docker-compatible API on a unix socket
 * when none answers, for testcontainers. MEMEX_ENGINE=docker|podman forces the choice.
 */
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './services';

export type EngineKind = 'docker' | 'podman';

export interface Engine {
  kind: EngineKind;
  /** The environment every engine command runs with. */
  env: NodeJS.ProcessEnv;
  /** Runs the engine's CLI; output captured. */
  run(args: string[], options?: SpawnSyncOptions): { status: number | null; stdout: string; stderr: string };
  /** Runs the engine's CLI with output on this terminal; throws when it fails. */
  exec(args: string[], options?: SpawnSyncOptions): void;
}

export const PODMAN_CONF = join(REPO_ROOT, 'deploy', 'podman', 'containers.conf');

function works(command: string, args: string[], env: NodeJS.ProcessEnv): boolean {
  const r = spawnSync(command, args, { stdio: 'ignore', env, timeout: 20_000 });
  return r.status === 0;
}

function engine(kind: EngineKind, env: NodeJS.ProcessEnv): Engine {
  return {
    kind,
    env,
    run(args, options = {}) {
      const r = spawnSync(kind, args, { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024, ...options });
      return { status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? (r.error ? r.error.message : '')) };
    },
    exec(args, options = {}) {
      const r = spawnSync(kind, args, { stdio: 'inherit', env, ...options });
      if (r.status !== 0) throw new Error(`${kind} ${args.slice(0, 3).join(' ')} … failed (${r.error?.message ?? `exit ${r.status}`})`);
    },
  };
}

/** The engine present, or an explanation of why there is none. */
export function findEngine(base: NodeJS.ProcessEnv = process.env): Engine | { missing: string } {
  const forced = base.MEMEX_ENGINE;
  const podmanEnv = { ...base, CONTAINERS_CONF: base.CONTAINERS_CONF || PODMAN_CONF };
  // DOCKER_HOST at podman's socket (as test:containers sets it): podman, driven by its own CLI.
  const viaPodmanSocket = /podman/i.test(base.DOCKER_HOST ?? '');
  if (forced !== 'podman' && !viaPodmanSocket) {
    const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}} {{.OperatingSystem}}'], { encoding: 'utf8', env: base, timeout: 20_000 });
    // docker's CLI talking to podman's API (DOCKER_HOST) is podman: use podman's own CLI then.
    if (info.status === 0 && !/podman/i.test(info.stdout)) return engine('docker', base);
    if (forced === 'docker') return { missing: `MEMEX_ENGINE=docker, but no Docker daemon answers (docker info: ${(info.stderr || info.error?.message || '').trim().split('\n')[0]})` };
  }
  if (works('podman', ['version', '--format', '{{.Client.Version}}'], podmanEnv)) return engine('podman', podmanEnv);
  return { missing: 'no container engine: neither a Docker daemon (docker info) nor podman; on Debian: sudo apt-get install -y podman runc' };
}

export function requireEngine(): Engine {
  const found = findEngine();
  if ('missing' in found) throw new Error(found.missing);
  return found;
}

function pings(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Where the podman API service for these settings listens: one socket per containers.conf (its path
 * and content), so a service started with another checkout's settings is never reused.
 */
export function podmanSocketPath(env: NodeJS.ProcessEnv): string {
  const conf = env.CONTAINERS_CONF || PODMAN_CONF;
  const key = createHash('sha256')
    .update(conf)
    .update(existsSync(conf) ? readFileSync(conf) : '')
    .digest('hex')
    .slice(0, 12);
  return join(env.XDG_RUNTIME_DIR || tmpdir(), 'memex-podman', `podman-${key}.sock`);
}

/**
 * A Docker-compatible API for testcontainers: DOCKER_HOST when it is set (or Docker's default
 * socket); with podman, its API service on a socket of ours (`podmanSocketPath`), started (detached;
 * it exits after 15 idle minutes) when it does not answer. The service runs from the socket's
 * directory: it outlives this process, and a service left in a checkout that was then removed
 * fails every container it starts ("write child: broken pipe"). Returns the environment
 * testcontainers needs.
 */
export async function apiSocket(found: Engine): Promise<Record<string, string>> {
  if (found.kind === 'docker') return found.env.DOCKER_HOST ? { DOCKER_HOST: found.env.DOCKER_HOST } : {};
  const socketPath = podmanSocketPath(found.env);
  const dir = dirname(socketPath);
  mkdirSync(dir, { recursive: true });
  if (!(existsSync(socketPath) && (await pings(socketPath)))) {
    const service = spawn('podman', ['system', 'service', '--time=900', `unix://${socketPath}`], { cwd: dir, env: found.env, detached: true, stdio: 'ignore' });
    service.unref();
    const deadline = Date.now() + 30_000;
    while (!(existsSync(socketPath) && (await pings(socketPath)))) {
      if (Date.now() > deadline) throw new Error(`podman system service did not answer on ${socketPath} within 30 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  // Ryuk (testcontainers' reaper) is an image no air-gapped machine has; the suites stop what they start.
  return { DOCKER_HOST: `unix://${socketPath}`, TESTCONTAINERS_RYUK_DISABLED: 'true', CONTAINERS_CONF: found.env.CONTAINERS_CONF ?? PODMAN_CONF };
}
