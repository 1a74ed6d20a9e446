import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the built console is: `MEMEX_CONSOLE_DIR` when set; in the sources, `dist` beside this file
 * (`pnpm --filter @memex/console build`, run by `pnpm install`); in a compiled bundle
 * (deploy/bundle.ts), which carries the assets in a `console` folder beside itself, that folder.
 */
export function consoleDir(here: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.MEMEX_CONSOLE_DIR) return env.MEMEX_CONSOLE_DIR;
  const inSources = join(here, 'dist');
  return existsSync(join(inSources, 'index.html')) ? inSources : join(here, 'console');
}

export const CONSOLE_DIST = consoleDir(dirname(fileURLToPath(import.meta.url)));

export function consoleBuilt(): boolean {
  return existsSync(join(CONSOLE_DIST, 'index.html'));
}
