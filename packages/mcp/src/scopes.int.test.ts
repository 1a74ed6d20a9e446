/**
 * MCP honours scopes and spaces (issue 49), through the official SDK client over HTTPS: the tool
 * list is the key's scopes', tool calls stay inside its space, and each call is audited.
 */
import { Agent } from 'node:https';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { httpsFetch } from '../../cli/src/client';
import { httpsJson, type HttpsResponse } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { startStack, type Stack } from '../../../test/support/stack';

const user = (id: string) => ({ field: 'user_id', operator: 'eq', value: id, filter_type: 'custom_metadata' });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('MCP with a scoped key', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let agent: Agent;
  let owner: string;
  const memos: Record<string, string> = {};
  const api = (method: string, path: string, key: string | null, body?: unknown): Promise<HttpsResponse<Json>> =>
    httpsJson<Json>(method, `${https.url}${path}`, { agent, ...(key ? { key } : {}), ...(body === undefined ? {} : { body }) });
  const createKey = async (key: string, body: Json): Promise<Json> => {
    const res = await api('POST', '/api/v1/project/keys', key, body);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0' } });
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, ca: https.ca });
    owner = (await stack.project('mcp-access')).key;
    for (const [name, uid] of [['a1', 'u1'], ['b1', 'u2'], ['b2', 'u2']] as const) {
      const res = await api('POST', '/api/v1/memo', owner, { title: `Plan ${name}`, content: `The otter plan ${name} for ${uid}.`, metadata: { user_id: uid } });
      expect(res.status, res.text).toBe(200);
      memos[name] = res.body.memo_uuid;
    }
  }, 120_000);

  afterAll(async () => {
    agent?.destroy();
    await https?.close();
    await stack?.stop();
  });

  it('lists over MCP only the tools the key may use, inside its space, and audits each tool call and streamed chat', async () => {
    const { api_key: key, key_id: keyId } = await createKey(owner, { name: 'assistant', scopes: ['search', 'memos:read', 'chat'], filters: [user('u2')] });
    const client = new Client({ name: 'access-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', https.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: httpsFetch({ ca: Buffer.from(https.ca) }),
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['ask', 'get_memo', 'list_memos', 'search']);
      const outside = (await client.callTool({ name: 'get_memo', arguments: { memo_id: memos.a1 } })) as { isError?: boolean; content: { text: string }[] };
      expect(outside.isError).toBe(true);
      expect(outside.content[0]!.text).toBe('Memex API error 404: Memo not found');
      const inside = (await client.callTool({ name: 'get_memo', arguments: { memo_id: memos.b2 } })) as { isError?: boolean; structuredContent?: Json };
      expect(inside.isError).toBeFalsy();
      expect(inside.structuredContent?.uuid).toBe(memos.b2);
      const listed = (await client.callTool({ name: 'list_memos', arguments: {} })) as { structuredContent?: Json };
      expect(listed.structuredContent?.results.map((m: Json) => m.uuid).sort()).toEqual([memos.b1, memos.b2].sort());
    } finally {
      await client.close();
    }
    const streamed = await api('POST', '/api/v1/chat', key, { query: 'What is the otter plan?', stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('"type":"done"');
    const entries = await eventually(async () => {
      const res = await api('GET', `/api/v1/audit?key_id=${keyId}`, owner);
      return (res.body.results as Json[]).some((e) => e.action === 'chat') ? (res.body.results as Json[]) : undefined;
    }, 5_000);
    const actions = entries.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['mcp.get_memo', 'memo.read', 'mcp.list_memos', 'memo.list', 'chat']));
    expect(entries.find((e) => e.action === 'memo.read' && e.status === 404)?.memo_ids).toEqual([]);
    expect(entries.find((e) => e.action === 'memo.read' && e.status === 200)?.memo_ids).toEqual([memos.b2]);
    for (const id of entries.find((e) => e.action === 'chat')!.memo_ids) expect([memos.b1, memos.b2]).toContain(id);
  }, 30_000);
});
