/**
 * Whether the container suites can run: they need a Docker engine (`docker info` must succeed; the
 * CLI alone is not enough). Without one, each suite registers one skipped test and prints one line
 * saying why.
 */
import { spawnSync } from 'node:child_process';
import { describe, it } from 'vitest';

export type DockerEngine = { available: true; version: string } | { available: false; reason: string };

let cached: DockerEngine | undefined;

export function dockerEngine(): DockerEngine {
  if (cached) return cached;
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 20_000 });
  if (info.error) {
    cached = { available: false, reason: `the docker CLI cannot run (${info.error.message})` };
  } else if (info.status !== 0) {
    const why = `${info.stderr}${info.stdout}`.trim().split('\n').find((l) => l.trim() !== '') ?? `exit ${info.status}`;
    cached = { available: false, reason: `no Docker engine answers (docker info: ${why.trim()})` };
  } else {
    cached = { available: true, version: info.stdout.trim() };
  }
  return cached;
}

/** `describe(title, body)` when a Docker engine answers; otherwise one skipped test and one line. */
export function describeWithDocker(title: string, body: () => void): void {
  const engine = dockerEngine();
  if (!engine.available) {
    const line = `${title}: skipped, ${engine.reason}`;
    console.warn(line);
    describe(title, () => {
      it.skip(line, () => undefined);
    });
    return;
  }
  describe(title, body);
}
