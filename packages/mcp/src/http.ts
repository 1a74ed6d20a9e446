import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MemexClient } from '@memex/client';
import { createMemexMcpServer } from './server';

/**
 * Answers one streamable-HTTP MCP request statelessly: a fresh server whose tools act through
 * `client` (the caller's key), closed when the response is.
 */
export async function handleMcpHttp(
  client: MemexClient,
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody: unknown,
  options: { scopes?: readonly string[] | undefined } = {},
): Promise<void> {
  const server = await createMemexMcpServer(client, options.scopes ? { scopes: options.scopes } : {});
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsedBody);
}
