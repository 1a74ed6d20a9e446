import { serveStdio } from '@memex/mcp';
import { cliClient } from './client';
import { options } from './options';

/**
 * `memex mcp`: the MCP tools over stdio, acting through the HTTPS API with MEMEX_API_KEY (or --key),
 * for assistants that start their tools as processes. Nothing but protocol goes to stdout.
 */
export async function runMcp(args: string[]): Promise<number> {
  const { values } = options(args, { key: { type: 'string' }, insecure: { type: 'boolean', short: 'k' } });
  if (!values.key && !process.env.MEMEX_API_KEY) throw new Error('no API key: set MEMEX_API_KEY or pass --key');
  await serveStdio(cliClient(values));
  return 0;
}
