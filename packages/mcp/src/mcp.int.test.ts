/**
 * The MCP server through the official SDK's own client, over both transports: streamable HTTP at the
 * gateway's `/mcp`, and stdio via `memex mcp` (a child process calling the HTTPS API).
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { httpsFetch } from '../../cli/src/client';
import { listenHttps } from '../../../test/support/httpsListener';
import { REPO_ROOT, startStack, type Stack } from '../../../test/support/stack';

const TOOLS = ['ask', 'create_memo', 'delete_memo', 'generate', 'get_memo', 'list_memos', 'search', 'update_memo'];

type ToolText = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

describe('MCP server (official SDK client)', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let keyA: string;
  let keyB: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '1000' } });
    https = await listenHttps(stack.app, stack.dataDir);
    keyA = (await stack.project('mcp-a')).key;
    keyB = (await stack.project('mcp-b')).key;
  }, 90_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await https?.close();
    await stack?.stop();
  });

  const httpTransport = (key: string): Transport =>
    new StreamableHTTPClientTransport(new URL('/mcp', https.url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: httpsFetch({ ca: Buffer.from(https.ca) }),
    });
  const stdioTransport = (key: string): Transport =>
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', join(REPO_ROOT, 'packages/cli/src/main.ts'), 'mcp'],
      cwd: REPO_ROOT,
      env: { ...(process.env as Record<string, string>), MEMEX_URL: https.url, MEMEX_API_KEY: key, MEMEX_DATA_DIR: stack.dataDir },
      stderr: 'pipe',
    });

  async function connect(transport: Transport): Promise<Client> {
    const client = new Client({ name: 'memex-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  const callTool = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolText;

  describe.each([
    ['streamable HTTP at /mcp', httpTransport],
    ['stdio via memex mcp', stdioTransport],
  ])('%s', (_name, transport) => {
    it('lists the tools with schemas and descriptions', async () => {
      const client = await connect(transport(keyA));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
      for (const tool of tools) {
        expect(tool.description!.length, tool.name).toBeGreaterThan(30);
        expect(tool.inputSchema.type).toBe('object');
      }
      const search = tools.find((t) => t.name === 'search')!;
      expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['query', 'filters', 'limit', 'search_method']));
      expect(search.inputSchema.required).toEqual(['query']);
    });

    it('creates a memo, finds it with search, reads it as a resource; another project’s key cannot see it', async () => {
      const client = await connect(transport(keyA));
      const word = `zephyrine${Math.random().toString(36).slice(2, 8)}`;
      const created = await callTool(client, 'create_memo', { title: `Winds ${word}`, content: `The ${word} wind blows over the northern moor every spring.`, tags: ['weather'] });
      expect(created.isError, created.content[0]?.text).toBeFalsy();
      const memoUuid = created.structuredContent!.memo_uuid as string;
      const found = await eventually(async () => {
        const res = await callTool(client, 'search', { query: `${word} wind` });
        const results = res.structuredContent!.results as { memo_uuid: string }[];
        return results.some((r) => r.memo_uuid === memoUuid) ? results : undefined;
      }, 20_000);
      expect(found[0]!.memo_uuid).toBe(memoUuid);
      const resource = await client.readResource({ uri: `memex://memo/${memoUuid}` });
      expect((resource.contents[0] as { text: string }).text).toContain(`# Winds ${word}`);

      const other = await connect(transport(keyB));
      const theirs = await callTool(other, 'search', { query: `${word} wind` });
      expect(theirs.structuredContent!.results).toEqual([]);
      const denied = await callTool(other, 'get_memo', { memo_id: memoUuid });
      expect(denied.isError).toBe(true);
      expect(denied.content[0]!.text).toBe('Memex API error 404: Memo not found');
      const notDeleted = await callTool(other, 'delete_memo', { memo_id: memoUuid });
      expect(notDeleted.isError).toBe(true);

      const updated = await callTool(client, 'update_memo', { memo_id: memoUuid, title: `Moor winds ${word}` });
      expect(updated.structuredContent).toEqual({ ok: true });
      const answer = await callTool(client, 'ask', { query: `When does the ${word} wind blow?` });
      expect(answer.structuredContent!.response).toMatch(/spring/);
      expect((answer.structuredContent!.citations as { memo_uuid: string }[]).map((c) => c.memo_uuid)).toContain(memoUuid);
      const deleted = await callTool(client, 'delete_memo', { memo_id: memoUuid });
      expect(deleted.isError).toBeFalsy();
      const gone = await callTool(client, 'get_memo', { memo_id: memoUuid });
      expect(gone.content[0]!.text).toBe('Memex API error 404: Memo not found');
    }, 60_000);
  });

  it('refuses /mcp without a key (401) and with an unknown key (403), as the API does', async () => {
    const fetch = httpsFetch({ ca: Buffer.from(https.ca) });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const none = await fetch(`${https.url}/mcp`, { method: 'POST', headers, body });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'API key is required' });
    const wrong = await fetch(`${https.url}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer mxp_wrong' }, body });
    expect(wrong.status).toBe(403);
  });
});
