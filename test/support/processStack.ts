/**
 * The stack as `pnpm start` runs it (separate processes, its own nats-server), for end-to-end tests
 * and benchmarks: started on free ports in a temporary data directory, with a project and key.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { eventually, freePort, tempDir } from '@memex/testing';
import { exited, runTs, spawnStart } from './processes';

export interface ProcessStack {
  base: string;
  port: number;
  natsPort: number;
  natsUrl: string;
  dataDir: string;
  ca: Buffer;
  key: string;
  projectId: string;
  env: Record<string, string>;
  /** A keep-alive HTTPS agent trusting the stack's certificate. */
  agent: Agent;
  /** The running `pnpm start` process (another one after a restart). */
  readonly process: ChildProcess;
  /** Another project with its key, made with the CLI as an operator would. */
  createProject(name: string): Promise<{ key: string; projectId: string }>;
  output(): string;
  /**
   * Stops the stack and starts it again on the same data, ports, project and key, with `env` over
   * the variables it started with and, when given, `args` instead of its `pnpm start` arguments
   * (benchmarks compare settings and `--scale` on one seeded data set this way).
   */
  restart(env: Record<string, string>, args?: string[]): Promise<void>;
  stop(): Promise<number | null>;
}

export async function startProcessStack(env: Record<string, string> = {}, args: string[] = []): Promise<ProcessStack> {
  const dir = tempDir('memex-stack-');
  const port = await freePort();
  const natsPort = await freePort();
  const natsUrl = `nats://127.0.0.1:${natsPort}`;
  const fullEnv = { MEMEX_PORT: String(port), MEMEX_DATA_DIR: dir.path, NATS_URL: natsUrl, LOG_LEVEL: 'warn', ...env };
  let output = '';
  let startArgs = args;
  const launch = async (launchEnv: Record<string, string>): Promise<ChildProcess> => {
    const started = await spawnStart(startArgs, launchEnv);
    output = '';
    started.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    started.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    try {
      await eventually(() => output.includes('[memex] ready'), 120_000, 200);
    } catch (error) {
      started.kill('SIGKILL');
      throw new Error(`stack did not become ready: ${(error as Error).message}\n${output}`);
    }
    return started;
  };
  const halt = async (running: ChildProcess): Promise<number | null> => {
    if (running.exitCode === null && running.signalCode === null) running.kill('SIGINT');
    const code = await Promise.race([exited(running), new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') {
      running.kill('SIGKILL');
      await exited(running);
    }
    return code === 'timeout' ? null : code;
  };
  let child = await launch(fullEnv);
  const createProject = async (name: string) => {
    const created = await runTs('packages/cli/src/main.ts', ['project', 'create', '--name', name, '--json'], fullEnv);
    if (created.code !== 0) throw new Error(`memex project create failed: ${created.stderr}`);
    const line = JSON.parse(created.stdout.trim()) as { api_key: string; project_id: string };
    return { key: line.api_key, projectId: line.project_id };
  };
  const { key, projectId } = await createProject('stack');
  const ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
  const agent = new Agent({ keepAlive: true, ca, maxSockets: 256 });
  return {
    base: `https://localhost:${port}`,
    port,
    natsPort,
    natsUrl,
    dataDir: dir.path,
    ca,
    key,
    projectId,
    env: fullEnv,
    agent,
    get process() {
      return child;
    },
    createProject,
    output: () => output,
    async restart(overrides, restartArgs) {
      const code = await halt(child);
      if (code !== 0) throw new Error(`the stack exited with ${code} when stopped for a restart:\n${output}`);
      if (restartArgs) startArgs = restartArgs;
      child = await launch({ ...fullEnv, ...overrides });
    },
    async stop() {
      agent.destroy();
      const code = await halt(child);
      dir.remove();
      return code;
    },
  };
}
