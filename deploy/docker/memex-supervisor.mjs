#!/usr/bin/env node
/**
 * The standalone `memex` image's process 1: an embedded nats-server and every Memex service
 * (/app/services.json, a copy of deploy/services.json), each restarted when it exits, all sharing
 * one volume (/data: nats/ for JetStream, the services' embedded stores, tls/). No dependencies.
 *
 * - NATS listens on 127.0.0.1:4222 only (NATS_URL is set for the services); only the gateway's
 *   HTTPS port is meant to be published.
 * - A service that exits is started again after a back-off (1 s, doubling to 30 s; reset once it
 *   has run for a minute). nats-server likewise.
 * - MEMEX_BOOTSTRAP_PROJECT=<name>: once the gateway is ready, on the first start of this volume,
 *   creates that project (in MEMEX_BOOTSTRAP_ORG's organization, if set) and writes
 *   {organization_id, project_id, api_key} to /data/bootstrap.json (mode 0600); the key is shown
 *   nowhere else. Later starts keep the file and create nothing.
 * - MEMEX_SINGLE_PROCESS=1: the services run in one Node process (dist/all-in-one.mjs) instead of
 *   one each: about half the memory, for small hosts and test containers.
 * - SIGTERM/SIGINT stop the services (up to 20 s), then nats-server, then exit 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';

const APP = process.env.MEMEX_APP_DIR || '/app';
const DATA = process.env.MEMEX_DATA_DIR || '/data';
const NATS_PORT = 4222;
const GATEWAY_PORT = Number(process.env.MEMEX_PORT || 8443);
const services =
  process.env.MEMEX_SINGLE_PROCESS === '1' ? ['all-in-one'] : JSON.parse(readFileSync(join(APP, 'services.json'), 'utf8')).services.map((s) => s.name);
const env = { ...process.env, NATS_URL: `nats://127.0.0.1:${NATS_PORT}`, MEMEX_DATA_DIR: DATA };

let stopping = false;
const children = new Map();

function log(message, extra = {}) {
  process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), name: 'supervisor', msg: message, ...extra })}\n`);
}

/** Runs `command` as `name`, restarting it with back-off whenever it exits, until stopping. */
function supervise(name, command, args) {
  let delay = 1000;
  const start = () => {
    const startedAt = Date.now();
    const child = spawn(command, args, { env, stdio: 'inherit' });
    children.set(name, child);
    child.on('exit', (code, signal) => {
      children.delete(name);
      if (stopping) return;
      if (Date.now() - startedAt > 60_000) delay = 1000;
      log(`${name} exited (${signal ?? code}); restarting in ${delay} ms`, { service: name });
      setTimeout(start, delay);
      delay = Math.min(delay * 2, 30_000);
    });
    child.on('error', (error) => log(`${name} could not start: ${error.message}`, { service: name }));
  };
  start();
}

function portOpen(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

function gatewayReady() {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: GATEWAY_PORT, path: '/readyz', rejectUnauthorized: false, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function bootstrap() {
  const name = process.env.MEMEX_BOOTSTRAP_PROJECT;
  const file = join(DATA, 'bootstrap.json');
  if (!name || existsSync(file)) return;
  while (!stopping && !(await gatewayReady())) await sleep(500);
  if (stopping) return;
  const args = [join(APP, 'dist', 'cli.mjs'), 'project', 'create', '--name', name, '--json'];
  if (process.env.MEMEX_BOOTSTRAP_ORG) args.push('--org', process.env.MEMEX_BOOTSTRAP_ORG);
  const created = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const line = created.stdout?.trim().split('\n').at(-1) ?? '';
  if (created.status !== 0 || !line.startsWith('{')) {
    log(`bootstrap of project ${name} failed: ${(created.stderr || created.stdout || '').trim()}`);
    return;
  }
  writeFileSync(file, `${line}\n`, { mode: 0o600 });
  log(`bootstrap: project ${name} created (${JSON.parse(line).project_id}); its API key is in ${file}`);
}

async function stop(signal) {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping`);
  const exited = (child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)));
  const memex = [...children].filter(([name]) => name !== 'nats-server').map(([, child]) => child);
  for (const child of memex) child.kill('SIGTERM');
  await Promise.race([Promise.all(memex.map(exited)), sleep(20_000)]);
  for (const child of memex) child.kill('SIGKILL');
  const nats = children.get('nats-server');
  if (nats) {
    nats.kill('SIGTERM');
    await Promise.race([exited(nats), sleep(10_000)]);
  }
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));

mkdirSync(join(DATA, 'nats'), { recursive: true });
supervise('nats-server', 'nats-server', ['--jetstream', '--store_dir', join(DATA, 'nats'), '--addr', '127.0.0.1', '--port', String(NATS_PORT), '--server_name', 'memex']);
while (!(await portOpen(NATS_PORT))) await sleep(100);
log(`nats-server up; starting ${services.join(', ')}`);
for (const name of services) supervise(name, process.execPath, ['--enable-source-maps', join(APP, 'dist', `${name}.mjs`)]);
await bootstrap();
