/**
 * Whether the container suites can run. vitest.containers.config.ts finds the engine
 * (deploy/engine.ts: a Docker daemon, or podman with its API socket started) and exports
 * DOCKER_HOST for testcontainers, or MEMEX_CONTAINERS_MISSING saying why there is none. Each suite
 * that cannot run registers one skipped test and prints one line saying why: no engine, or an image
 * that is neither present nor pullable (no registry reachable, as on air-gapped machines).
 */
import { describe, it } from 'vitest';
import { findEngine, type Engine } from '../../../deploy/engine';

export type DockerEngine = { available: true; kind: Engine['kind'] } | { available: false; reason: string };

let cached: DockerEngine | undefined;
const images = new Map<string, string | undefined>();

export function dockerEngine(): DockerEngine {
  if (cached) return cached;
  if (process.env.MEMEX_CONTAINERS_MISSING) return (cached = { available: false, reason: process.env.MEMEX_CONTAINERS_MISSING });
  const found = findEngine();
  cached = 'missing' in found ? { available: false, reason: found.missing } : { available: true, kind: found.kind };
  return cached;
}

/** undefined when `image` is present or could be pulled now; otherwise why not. */
export function imageMissing(image: string): string | undefined {
  if (images.has(image)) return images.get(image);
  const found = findEngine();
  let reason: string | undefined;
  if ('missing' in found) reason = found.missing;
  else if (found.run(['image', 'inspect', image], { stdio: 'ignore' }).status !== 0) {
    const pulled = found.run(['pull', '--quiet', image], { timeout: 300_000 });
    if (pulled.status !== 0) reason = `image ${image} is not available (${pulled.stderr.trim().split('\n').at(-1)?.slice(0, 160) ?? 'pull failed'})`;
  }
  images.set(image, reason);
  return reason;
}

function skipped(title: string, reason: string): void {
  const line = `${title}: skipped, ${reason}`;
  console.warn(line);
  describe(title, () => {
    it.skip(line, () => undefined);
  });
}

/** `describe(title, body)` when a container engine answers; otherwise one skipped test and one line. */
export function describeWithDocker(title: string, body: () => void): void {
  const engine = dockerEngine();
  if (!engine.available) return skipped(title, engine.reason);
  describe(title, body);
}

/** Like describeWithDocker, and every image must be present or pullable. */
export function describeWithImages(title: string, required: string[], body: () => void): void {
  const engine = dockerEngine();
  if (!engine.available) return skipped(title, engine.reason);
  const missing = required.map(imageMissing).find((r) => r !== undefined);
  if (missing) return skipped(title, missing);
  describe(title, body);
}
