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
  /** Further bundles it runs beside its own, `dist/<companion>.mjs` (the extractor's sandbox child). */
  companions?: string[];
}

/** Where each companion bundle is compiled from. */
const COMPANION_ENTRIES: Record<string, string> = {
  'extractor-child': 'services/extractor/src/sandbox/child.ts',
};

export const SERVICES: readonly ServiceSpec[] = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'deploy', 'services.json'), 'utf8')) as { services: ServiceSpec[] }
).services;

export const SERVICE_NAMES: readonly string[] = SERVICES.map((s) => s.name);

/** What `pnpm build` bundles: every service, its companions, and the `memex` CLI. */
export const BUNDLES: readonly { name: string; entry: string }[] = [
  ...SERVICE_NAMES.map((name) => ({ name, entry: `services/${name}/src/main.ts` })),
  ...SERVICES.flatMap((s) => (s.companions ?? []).map((name) => {
    const entry = COMPANION_ENTRIES[name];
    if (!entry) throw new Error(`deploy/services.json: ${s.name} names an unknown companion bundle ${name}`);
    return { name, entry };
  })),
  { name: 'cli', entry: 'packages/cli/src/main.ts' },
  // Every service in one process: `pnpm start --single-process`, the standalone image's MEMEX_SINGLE_PROCESS=1.
  { name: 'all-in-one', entry: 'scripts/allInOne.ts' },
];
