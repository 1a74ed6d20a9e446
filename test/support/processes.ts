import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { bundleStartScript } from '../../deploy/bundle';
import { REPO_ROOT } from './paths';

/**
 * Spawns node with `argv` in the repo. A test process that ends without stopping it (a failed hook,
 * a timeout) asks it to stop too; SIGTERM, so a stack it started shuts its own children down.
 */
function spawnNode(argv: string[], env: Record<string, string>, quiet = true): ChildProcess {
  const child = spawn(process.execPath, argv, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  const stopOnExit = () => child.kill('SIGTERM');
  process.once('exit', stopOnExit);
  child.once('exit', () => process.off('exit', stopOnExit));
  return child;
}

/** Runs a TypeScript entry point of the repo with tsx. */
export function spawnTs(entry: string, args: string[], env: Record<string, string>, options: { quiet?: boolean } = {}): ChildProcess {
  return spawnNode(['--import', 'tsx', join(REPO_ROOT, entry), ...args], env, options.quiet !== false);
}

/**
 * `pnpm start` as it runs: its script compiled to dist/start.mjs, run with plain node (see
 * deploy/bundle.ts bundleStartScript).
 */
export async function spawnStart(args: string[], env: Record<string, string>): Promise<ChildProcess> {
  return spawnNode([await bundleStartScript(), ...args], env);
}

/** Runs a TypeScript entry point to completion and returns its output. */
export function runTs(entry: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnTs(entry, args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Runs vitest (the repo's own config) in a child process, e.g. an end-to-end suite against a target named by env. */
export function runVitest(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    // Colour codes stripped even where the reporter ignores NO_COLOR, so callers can match the summary.
    // eslint-disable-next-line no-control-regex
    child.once('exit', (code) => resolve({ code: code ?? -1, output: output.replace(/\u001b\[[0-9;]*m/g, '') }));
  });
}
