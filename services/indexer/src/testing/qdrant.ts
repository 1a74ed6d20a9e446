/**
 * Where the Qdrant tests get a server: `QDRANT_URL` (with `QDRANT_API_KEY` if it needs one), else a
 * throwaway container when a Docker engine answers, else nowhere (the tests skip, saying why).
 */
import { spawnSync } from 'node:child_process';

/**
 * The image the container runs: the oldest Qdrant line the adapter supports (conditional upserts
 * with `update_filter` arrived in 1.16.0), so the suite proves the minimum works.
 */
export const QDRANT_TEST_IMAGE = 'qdrant/qdrant:v1.16.3';

type QdrantTestTarget =
  | { kind: 'url'; url: string; apiKey?: string }
  | { kind: 'container' }
  | { kind: 'unavailable'; reason: string };

export interface QdrantTestServer {
  url: string;
  apiKey?: string;
  stop(): Promise<void>;
}

/** Whether a Docker engine answers (the CLI alone is not enough: `docker info` must succeed). */
export function dockerEngineAvailable(): boolean {
  const result = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 15_000 });
  return result.status === 0;
}

export function qdrantTestTarget(env: NodeJS.ProcessEnv = process.env): QdrantTestTarget {
  const url = env.QDRANT_URL?.trim();
  if (url) return env.QDRANT_API_KEY ? { kind: 'url', url, apiKey: env.QDRANT_API_KEY } : { kind: 'url', url };
  if (dockerEngineAvailable()) return { kind: 'container' };
  return {
    kind: 'unavailable',
    reason: 'Qdrant contract suite skipped: set QDRANT_URL or run where a Docker engine is available (testcontainers)',
  };
}

/** The server of a target that has one; a container is removed again by `stop`. */
export async function startQdrant(target: Exclude<QdrantTestTarget, { kind: 'unavailable' }>): Promise<QdrantTestServer> {
  if (target.kind === 'url') {
    return { url: target.url, ...(target.apiKey ? { apiKey: target.apiKey } : {}), stop: async () => undefined };
  }
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(QDRANT_TEST_IMAGE)
    .withExposedPorts(6333)
    .withWaitStrategy(Wait.forHttp('/readyz', 6333).forStatusCode(200))
    .start();
  return {
    url: `http://${container.getHost()}:${container.getMappedPort(6333)}`,
    stop: async () => {
      await container.stop();
    },
  };
}
