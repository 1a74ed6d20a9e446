import type { FastifyInstance, InjectOptions } from 'fastify';
import { MemexClient } from '@memex/client';
import { handleMcpHttp } from '@memex/mcp';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';

/**
 * A fetch that answers through this app's own routes (`inject`, no socket): MCP tools run with the
 * caller's Authorization header, so the same auth, project isolation, validation and rate limit apply.
 */
function inProcessFetch(app: FastifyInstance): typeof fetch {
  return (async (input: string | URL, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const headers = { ...(init.headers as Record<string, string> | undefined) };
    const res = await app.inject({
      method: (init.method ?? 'GET') as InjectOptions['method'],
      url: url.pathname + url.search,
      headers,
      ...(typeof init.body === 'string' ? { payload: init.body } : {}),
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out.set(name, String(value));
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: out });
  }) as typeof fetch;
}

/**
 * MCP over streamable HTTP at `/mcp`, stateless: each POST carries its own bearer key and gets a
 * fresh server whose tools act as that key. GET and DELETE (sessions, server-initiated streams) are 405.
 */
export function mcpRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const fetchHere = inProcessFetch(app);
  app.post(
    '/mcp',
    {
      config: { access: { scope: 'any', action: 'mcp' } },
      schema: {
        summary: 'Model Context Protocol (streamable HTTP)',
        description: 'Tools search, ask, generate, create_memo, get_memo, list_memos, update_memo, delete_memo; memos as memex://memo/{uuid}. Same bearer key as the API.',
        tags: ['mcp'],
      },
    },
    async (request, reply) => {
      const requested = requestedProject(request.query);
      const ctx = requestContext(deps, request, reply, requested);
      const rpc = request.body as { method?: unknown; params?: { name?: unknown } } | undefined;
      if (request.auditNote && rpc?.method === 'tools/call' && typeof rpc.params?.name === 'string') request.auditNote.action = `mcp.${rpc.params.name.slice(0, 64)}`;
      const authorization = request.headers.authorization!;
      const client = new MemexClient({ baseUrl: 'http://gateway.internal', apiKey: authorization.replace(/^Bearer\s+/i, '').trim(), fetch: fetchHere, maxRetries: 0, ...(requested ? { projectId: ctx.projectId } : {}) });
      reply.hijack();
      reply.raw.setHeader('x-request-id', ctx.requestId);
      for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
        const value = reply.getHeader(name);
        if (value !== undefined) reply.raw.setHeader(name, value as string);
      }
      await handleMcpHttp(client, request.raw, reply.raw, request.body, { scopes: ctx.caller.owner ? undefined : ctx.caller.scopes });
    },
  );
  const notAllowed = { schema: { hide: true } };
  app.get('/mcp', notAllowed, async (_request, reply) => reply.code(405).header('allow', 'POST').send({ error: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages' }));
  app.delete('/mcp', notAllowed, async (_request, reply) => reply.code(405).header('allow', 'POST').send({ error: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages' }));
}
