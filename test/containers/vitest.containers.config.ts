/**
 * `pnpm test:containers`: the suites that run real servers in containers (testcontainers): the
 * Memex images (standalone and composed), NATS, MongoDB, Qdrant, Ollama and the Compose stacks.
 * The engine is found here (deploy/engine.ts): a Docker daemon, or podman, whose Docker-compatible
 * API socket is started when none answers; testcontainers gets DOCKER_HOST (and, with podman, no
 * Ryuk: its image is not available offline; the suites stop what they start). A suite whose
 * engine or image is missing skips with one line saying so. `pnpm test` excludes test/containers.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { apiSocket, findEngine } from '../../deploy/engine';
import { imageTag } from '../../deploy/images';

const found = findEngine();
const exclude: string[] = [];
if ('missing' in found) process.env.MEMEX_CONTAINERS_MISSING = found.missing;
else Object.assign(process.env, await apiSocket(found));
// The README example of @memex/testcontainers is a user's test, verbatim: it has no skip of its
// own, so it is left out (saying so) when the standalone image is not there.
if ('missing' in found || found.run(['image', 'inspect', imageTag('memex')], { stdio: 'ignore' }).status !== 0) {
  console.warn(`example.containers.test.ts: skipped, image ${imageTag('memex')} is not available (pnpm images builds it)`);
  exclude.push('test/containers/example.containers.test.ts');
}

export default defineConfig({
  test: {
    root: join(dirname(fileURLToPath(import.meta.url)), '..', '..'),
    include: ['test/containers/**/*.containers.test.ts'],
    exclude,
    pool: 'forks',
    // One suite at a time: each starts containers, and CI runners have two cores.
    fileParallelism: false,
    // Image pulls and model downloads happen in hooks.
    testTimeout: 180_000,
    hookTimeout: 900_000,
  },
});
