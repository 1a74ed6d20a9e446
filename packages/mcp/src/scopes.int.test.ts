/**
 * MCP honours scopes and spaces (issue 49), through the official SDK client over HTTPS: the tool
 * list is the key's scopes', tool calls stay inside its space, and each call is audited.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@memex/testing';
import { httpsFetch } from '../../cli/src/client';
import { startAccessStack, user, type AccessStack, type Json } from '../../../test/support/accessStack';

describe('MCP with a scoped key', () => {
  let access: AccessStack;
  let owner: string;
  let memos: Record<string, string>;
  let api: AccessStack['api'];
  let createKey: AccessStack['createKey'];

  beforeAll(async () => {
    access = await startAccessStack({
      project: 'mcp-access',
      memos: (
        [
          ['a1', 'u1'],
          ['b1', 'u2'],
          ['b2', 'u2'],
        ] as const
      ).map(([name, uid]) => ({ name, user: uid, title: `Plan ${name}`, content: `The otter plan ${name} for ${uid}.` })),
    });
    ({ owner, memos, api, createKey } = access);
  }, 120_000);

  afterAll(async () => {
    await access?.stop();
  });

  it('lists over MCP only the tools the key may use, inside its space, and audits each tool call and streamed chat', async () => {
    const { api_key: key, key_id: keyId } = await createKey(owner, { name: 'assistant', scopes: ['search', 'memos:read', 'chat'], filters: [user('u2')] });
    const client = new Client({ name: 'access-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', access.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: httpsFetch({ ca: Buffer.from(access.ca) }),
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
