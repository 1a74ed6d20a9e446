import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectNats } from '@memex/runtime';

/**
 * The NATS the CLI talks to: NATS_URL; else the server `pnpm start` started for the data dir (it
 * writes the URL to MEMEX_DATA_DIR/nats.url); else nats://127.0.0.1:4222.
 */
function natsUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NATS_URL) return env.NATS_URL;
  const file = join(env.MEMEX_DATA_DIR || './data', 'nats.url');
  if (existsSync(file)) {
    const url = readFileSync(file, 'utf8').trim();
    if (url) return url;
  }
  return 'nats://127.0.0.1:4222';
}

export async function connectCli(): Promise<Awaited<ReturnType<typeof connectNats>>> {
  const url = natsUrl();
  return connectNats({ url, name: 'memex-cli', timeoutMs: 3_000, auth: process.env }).catch((error: unknown) => {
    throw new Error(`cannot reach NATS at ${url} (${(error as Error).message}); is the stack running?`);
  });
}
