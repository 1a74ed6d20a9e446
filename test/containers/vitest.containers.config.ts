/**
 * `pnpm test:containers`: the suites that run real servers in containers (testcontainers):
 * NATS, MongoDB, Qdrant, Ollama and the whole Compose stack. Each suite skips, saying why, when no
 * Docker engine answers. The default `pnpm test` excludes test/containers.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: join(dirname(fileURLToPath(import.meta.url)), '..', '..'),
    include: ['test/containers/**/*.containers.test.ts'],
    pool: 'forks',
    // One suite at a time: each starts containers, and CI runners have two cores.
    fileParallelism: false,
    // Image pulls and model downloads happen in hooks.
    testTimeout: 180_000,
    hookTimeout: 900_000,
  },
});
