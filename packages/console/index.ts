import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the built console is (`pnpm --filter @memex/console build`, run by `pnpm install`). */
export const CONSOLE_DIST = join(dirname(fileURLToPath(import.meta.url)), 'dist');

export function consoleBuilt(): boolean {
  return existsSync(join(CONSOLE_DIST, 'index.html'));
}
