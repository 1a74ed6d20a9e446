import type { MemexClient } from '@memex/client';
import { createMemexMcpServer } from './server';

/** Serves the Memex tools over stdin/stdout until the client closes them (for desktop assistants). */
export async function serveStdio(client: MemexClient): Promise<void> {
  const server = await createMemexMcpServer(client);
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
}
