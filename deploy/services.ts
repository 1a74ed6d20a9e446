/**
 * The one list of Memex service processes (deploy/services.json) and the conventions that derive
 * everything else from a name: package `@memex/<name>`, entry `services/<name>/src/main.ts`, image
 * `memex-<name>`, bundle `dist/<name>.mjs`. The CLI is bundled and shipped in every image too.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface ServiceSpec {
  name: string;
  /** The HTTPS port it publishes (the gateway). */
  port?: number;
  /** Its image bakes in the embedding model (the indexer). */
  needsModel?: boolean;
}

export const SERVICES: readonly ServiceSpec[] = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'deploy', 'services.json'), 'utf8')) as { services: ServiceSpec[] }
).services;

export const SERVICE_NAMES: readonly string[] = SERVICES.map((s) => s.name);

/** What `pnpm build` bundles: every service, and the `memex` CLI. */
export const BUNDLES: readonly { name: string; entry: string }[] = [
  ...SERVICE_NAMES.map((name) => ({ name, entry: `services/${name}/src/main.ts` })),
  { name: 'cli', entry: 'packages/cli/src/main.ts' },
];
