/**
 * `pnpm compose:up | compose:down | compose:memex <args>`: the embedded Compose stack
 * (deploy/compose/docker-compose.embedded.yml, profile `embedded`) on the engine present.
 *
 * - Docker with the Compose plugin: `docker compose … up -d --wait`, `down --volumes`, `exec`.
 * - podman (4.3 has no `podman compose`): this file reads the same Compose file and runs its
 *   services with podman itself: one network, the named volumes, the services in dependency order,
 *   each started once the ones it depends on pass their health checks, with the file's ports,
 *   environment, volumes, read-only root, tmpfs, dropped capabilities and restart policy. It
 *   understands what that file uses, not all of Compose.
 *
 * `up` returns once the gateway answers /readyz on https://127.0.0.1:$MEMEX_PORT (default 8443);
 * `down` removes the containers, the network and the volumes. MEMEX_COMPOSE_PROJECT names the
 * project (default memex).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { requireEngine, type Engine } from './engine';
import { REPO_ROOT } from './services';

const COMPOSE_DIR = join(REPO_ROOT, 'deploy', 'compose');
const COMPOSE_FILE = join(COMPOSE_DIR, 'docker-compose.embedded.yml');
const PROFILE = 'embedded';

interface Service {
  image: string;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  restart?: string;
  read_only?: boolean;
  tmpfs?: string[];
  cap_drop?: string[];
  security_opt?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; timeout?: string; retries?: number; start_period?: string };
}

export interface ComposeOptions {
  project?: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
}

/** `${VAR}`, `${VAR:-default}` and `${VAR-default}` as Compose substitutes them. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)-([^}]*))?\}/g, (_, name: string, colon: string, fallback: string | undefined) => {
    const value = env[name];
    if (fallback === undefined) return value ?? '';
    return value === undefined || (colon === ':' && value === '') ? fallback : value;
  });
}

export function loadCompose(env: NodeJS.ProcessEnv): Record<string, Service> {
  const file = parse(interpolate(readFileSync(COMPOSE_FILE, 'utf8'), env), { merge: true }) as { services: Record<string, Service> };
  return Object.fromEntries(Object.entries(file.services).filter(([, s]) => !s.profiles || s.profiles.includes(PROFILE)));
}

function order(services: Record<string, Service>): string[] {
  const done: string[] = [];
  const visit = (name: string, path: string[]) => {
    if (done.includes(name)) return;
    if (path.includes(name)) throw new Error(`dependency cycle: ${[...path, name].join(' -> ')}`);
    for (const dependency of Object.keys(services[name]?.depends_on ?? {})) visit(dependency, [...path, name]);
    done.push(name);
  };
  for (const name of Object.keys(services)) visit(name, []);
  return done;
}

const seconds = (duration: string | undefined, fallback: number) => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(duration ?? '');
  if (!m) return fallback;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the service's health check inside it until it passes. */
async function waitHealthy(engine: Engine, container: string, service: Service): Promise<void> {
  const check = service.healthcheck;
  if (!check) return;
  const test = check.test[0] === 'CMD-SHELL' ? ['sh', '-c', check.test.slice(1).join(' ')] : check.test.slice(1);
  const deadline = Date.now() + (seconds(check.start_period, 0) + seconds(check.interval, 10) * (check.retries ?? 3) + 120) * 1000;
  let last = '';
  while (Date.now() < deadline) {
    const r = engine.run(['exec', container, ...test], { timeout: seconds(check.timeout, 10) * 1000 });
    if (r.status === 0) return;
    last = `${r.stdout}${r.stderr}`.trim();
    const state = engine.run(['inspect', '--format', '{{.State.Status}}', container]).stdout.trim();
    if (state === 'exited' && service.restart !== 'unless-stopped' && service.restart !== 'always') break;
    await sleep(1000);
  }
  const logs = engine.run(['logs', '--tail', '30', container]);
  throw new Error(`${container} did not become healthy (${last})\n${logs.stdout}${logs.stderr}`);
}

function podmanUp(engine: Engine, project: string, services: Record<string, Service>): Promise<void> {
  const label = `io.memex.compose.project=${project}`;
  const network = `${project}_default`;
  if (engine.run(['network', 'exists', network]).status !== 0) engine.exec(['network', 'create', '--label', label, network], { stdio: 'ignore' });
  return (async () => {
    for (const name of order(services)) {
      const s = services[name]!;
      const container = `${project}-${name}-1`;
      engine.run(['rm', '--force', container]);
      for (const [dependency, { condition }] of Object.entries(s.depends_on ?? {})) {
        if (condition === 'service_healthy') await waitHealthy(engine, `${project}-${dependency}-1`, services[dependency]!);
      }
      const args = ['run', '--detach', '--name', container, '--label', label, '--network', network, '--network-alias', name, '--hostname', name];
      for (const [key, value] of Object.entries(s.environment ?? {})) args.push('--env', `${key}=${value}`);
      for (const volume of s.volumes ?? []) {
        const [source, ...rest] = volume.split(':');
        if (source!.startsWith('.') || isAbsolute(source!)) {
          args.push('--volume', [isAbsolute(source!) ? source : join(COMPOSE_DIR, source!), ...rest].join(':'));
        } else {
          const named = `${project}_${source}`;
          if (engine.run(['volume', 'exists', named]).status !== 0) engine.exec(['volume', 'create', '--label', label, named], { stdio: 'ignore' });
          args.push('--volume', [named, ...rest].join(':'));
        }
      }
      for (const port of s.ports ?? []) args.push('--publish', port);
      if (s.read_only) args.push('--read-only');
      for (const tmpfs of s.tmpfs ?? []) args.push('--tmpfs', tmpfs);
      for (const cap of s.cap_drop ?? []) args.push('--cap-drop', cap);
      for (const opt of s.security_opt ?? []) args.push('--security-opt', opt);
      if (s.restart && s.restart !== 'no') args.push('--restart', s.restart);
      args.push(s.image, ...(s.command ?? []));
      const started = engine.run(args);
      if (started.status !== 0) throw new Error(`podman run ${name} failed: ${started.stderr.trim()}`);
    }
  })();
}

function podmanDown(engine: Engine, project: string): void {
  const label = `io.memex.compose.project=${project}`;
  const ids = engine.run(['ps', '--all', '--quiet', '--filter', `label=${label}`]).stdout.split('\n').filter(Boolean);
  if (ids.length > 0) engine.run(['rm', '--force', '--time', '10', ...ids]);
  const volumes = engine.run(['volume', 'ls', '--quiet', '--filter', `label=${label}`]).stdout.split('\n').filter(Boolean);
  if (volumes.length > 0) engine.run(['volume', 'rm', '--force', ...volumes]);
  engine.run(['network', 'rm', '--force', `${project}_default`]);
}

function dockerCompose(engine: Engine, project: string, args: string[], env: NodeJS.ProcessEnv, stdio: 'inherit' | 'pipe' = 'inherit') {
  return spawnSync('docker', ['compose', '-p', project, '-f', COMPOSE_FILE, '--profile', PROFILE, ...args], { env: { ...engine.env, ...env }, stdio, encoding: 'utf8' });
}

function hasDockerCompose(engine: Engine): boolean {
  return engine.kind === 'docker' && spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;
}

/** GET https://127.0.0.1:port/readyz (the certificate is the stack's own) until it answers 200. */
export async function waitReady(port: number, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const status = await new Promise<number>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 3000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (status === 200) return;
    last = status === 0 ? 'no answer' : `status ${status}`;
    await sleep(500);
  }
  throw new Error(`the gateway on https://127.0.0.1:${port} was not ready within ${timeoutMs / 1000} s (${last})`);
}

export async function composeUp(options: ComposeOptions = {}): Promise<{ port: number; project: string }> {
  const env = { ...process.env, ...options.env };
  const port = options.port ?? Number(env.MEMEX_PORT || 8443);
  const project = options.project ?? (env.MEMEX_COMPOSE_PROJECT || 'memex');
  env.MEMEX_PORT = String(port);
  const engine = requireEngine();
  if (hasDockerCompose(engine)) {
    const r = dockerCompose(engine, project, ['up', '--detach', '--wait'], env);
    if (r.status !== 0) throw new Error('docker compose up failed');
  } else if (engine.kind === 'podman') {
    await podmanUp(engine, project, loadCompose(env));
  } else {
    throw new Error('Docker answers but its Compose plugin is missing (docker compose version)');
  }
  await waitReady(port);
  return { port, project };
}

export function composeDown(options: ComposeOptions = {}): void {
  const env = { ...process.env, ...options.env };
  const project = options.project ?? (env.MEMEX_COMPOSE_PROJECT || 'memex');
  const engine = requireEngine();
  if (hasDockerCompose(engine)) dockerCompose(engine, project, ['down', '--volumes', '--timeout', '10'], env);
  else podmanDown(engine, project);
}

/** Runs `command` inside a service's container of the stack; returns its exit code and output. */
export function composeExec(service: string, command: string[], options: ComposeOptions & { stdio?: 'inherit' | 'pipe' } = {}): { status: number; stdout: string; stderr: string } {
  const env = { ...process.env, ...options.env };
  const project = options.project ?? (env.MEMEX_COMPOSE_PROJECT || 'memex');
  const engine = requireEngine();
  const stdio = options.stdio ?? 'inherit';
  const r = hasDockerCompose(engine)
    ? dockerCompose(engine, project, ['exec', '-T', service, ...command], env, stdio)
    : spawnSync('podman', ['exec', `${project}-${service}-1`, ...command], { env: engine.env, stdio, encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}

/** `memex <args>` inside the stack's gateway container (where `memex api` trusts the certificate). */
export function composeMemex(args: string[], options: ComposeOptions & { stdio?: 'inherit' | 'pipe' } = {}) {
  return composeExec('gateway', ['memex', ...args], options);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'up') {
    const started = Date.now();
    const { port } = await composeUp();
    console.log(`Memex (compose, embedded) is ready on https://localhost:${port} after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } else if (command === 'down') {
    composeDown();
  } else if (command === 'memex') {
    process.exitCode = composeMemex(rest).status;
  } else {
    console.error('usage: tsx deploy/compose.ts up|down|memex <args>');
    process.exitCode = 2;
  }
}
