/**
 * Zero reads outside a key's space (issue 49): a property-based run of generated cross-space
 * attempts over HTTPS and MCP (official SDK client), one scoped key per spec filter case
 * (packages/testing's filterCases: every operator on every native field, metadata, tags, ANDs),
 * against every memo route, search method, chat, generate and MCP tool, each request adding its
 * own filters from another case. The oracle is `matchesFilters` on the memo as the owner sees it.
 */
import { Agent } from 'node:https';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesFilters, type Filter, type Memo } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsFetch } from '../../cli/src/client';
import { httpsJson, type HttpsResponse } from '../../../test/support/https';
import { listenHttps } from '../../../test/support/httpsListener';
import { postSpaceMemos, spaceKeys, type SpaceKey } from '../../../test/support/spaceMemos';
import { startStack, type Stack } from '../../../test/support/stack';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const RUNS = 2_000;
const ROUTES = [
  'get',
  'get-by-reference',
  'status',
  'history',
  'file',
  'patch',
  'delete',
  'list',
  'title_contains',
  'title_startswith',
  'chunk_vector_search',
  'chat',
  'generate',
  'mcp.get_memo',
  'mcp.list_memos',
  'mcp.search',
  'mcp.ask',
  'mcp.generate',
  'mcp.update_memo',
  'mcp.delete_memo',
] as const;
type Route = (typeof ROUTES)[number];

describe(`no memo outside a key's space, over ${RUNS} generated attempts`, () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let agent: Agent;
  let owner: string;
  let memos: Memo[];
  let spaces: SpaceKey[];
  const mcpClients = new Map<string, Client>();
  const counts = new Map<Route, number>();

  const api = (method: string, path: string, key: string, body?: unknown): Promise<HttpsResponse<Json>> =>
    httpsJson<Json>(method, `${https.url}${path}`, { agent, key, ...(body === undefined ? {} : { body }) });
  const mcp = async (key: string): Promise<Client> => {
    let client = mcpClients.get(key);
    if (!client) {
      client = new Client({ name: 'spaces-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', https.url), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: httpsFetch({ ca: Buffer.from(https.ca) }) }),
      );
      mcpClients.set(key, client);
    }
    return client;
  };
  const tool = async (key: string, name: string, args: Json) => (await (await mcp(key)).callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[]; structuredContent?: Json };

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0' } });
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, maxSockets: 16, ca: https.ca });
    owner = (await stack.project('spaces')).key;
    const { generated, ids } = await postSpaceMemos(api, owner, 30, 49);
    // Processing adds tags: the oracle reads each memo once it is processed, as it stays.
    memos = await Promise.all(
      ids.map((id) =>
        eventually(async () => {
          const res = await api('GET', `/api/v1/memo/${id}`, owner);
          return res.status === 200 && !res.body.pending ? (res.body as Memo) : undefined;
        }, 60_000),
      ),
    );
    spaces = await spaceKeys(api, owner, generated, ['memos:read', 'memos:write', 'search', 'chat', 'generate']);
  }, 180_000);

  afterAll(async () => {
    for (const client of mcpClients.values()) await client.close().catch(() => undefined);
    agent?.destroy();
    await https?.close();
    await stack?.stop();
  });

  const inSpace = (memo: Memo, filters: readonly Filter[]) =>
    matchesFilters(
      { title: memo.title, source: memo.source ?? null, clientReferenceId: memo.client_reference_id ?? null, tags: memo.tags.map((t) => t.tag), metadata: memo.metadata ?? {} },
      filters,
    );

  it('answers every by-id call outside the space with 404 and returns nothing outside it anywhere', async () => {
    const byId = new Map(memos.map((m) => [m.uuid, m]));
    const attempt = fc.record({
      space: fc.nat({ max: spaces.length - 1 }),
      memo: fc.nat({ max: memos.length - 1 }),
      route: fc.constantFrom(...ROUTES),
      extra: fc.option(fc.nat({ max: spaces.length - 1 }), { nil: undefined }),
      word: fc.constantFrom('alpha', 'Report', 'otter', 'Q3', 'notes', 'Ärger', 'delta'),
    });
    await fc.assert(
      fc.asyncProperty(attempt, async ({ space, memo: memoIndex, route, extra, word }) => {
        const { key, filters, name } = spaces[space]!;
        const memo = memos[memoIndex]!;
        const inside = inSpace(memo, filters);
        const requestFilters = extra === undefined ? [] : spaces[extra]!.filters;
        const where = `${route} as "${name}" on ${memo.title}`;
        counts.set(route, (counts.get(route) ?? 0) + 1);
        // Everything a call returns must be in the space.
        const allInSpace = (uuids: string[]) => {
          for (const id of uuids) expect(inSpace(byId.get(id)!, filters), `${where}: returned ${id}`).toBe(true);
        };
        const byIdCall = async (method: string, path: string, body?: Json) => {
          // DELETE and content-free PATCH only where they must fail, so the memos stay as they are.
          const res = await api(method, path, key, body);
          if (!inside) expect({ where, status: res.status, body: res.body }).toEqual({ where, status: 404, body: { error: 'Memo not found' } });
          else expect([200, 404], where).toContain(res.status);
          if (inside && res.status === 404) expect(res.body.error, where).toBe('This memo has no original file');
        };
        switch (route) {
          case 'get':
            return byIdCall('GET', `/api/v1/memo/${memo.uuid}`);
          case 'get-by-reference':
            return memo.client_reference_id ? byIdCall('GET', `/api/v1/memo/${encodeURIComponent(memo.client_reference_id)}?id_type=reference_id`) : byIdCall('GET', `/api/v1/memo/${memo.uuid}`);
          case 'status':
            return byIdCall('GET', `/api/v1/memo/${memo.uuid}/status`);
          case 'history':
            return byIdCall('GET', `/api/v1/memo/${memo.uuid}/history`);
          case 'file':
            return byIdCall('GET', `/api/v1/memo/${memo.uuid}/file`);
          case 'patch':
            return byIdCall('PATCH', `/api/v1/memo/${memo.uuid}`, { title: memo.title });
          case 'delete':
            if (inside) return;
            return byIdCall('DELETE', `/api/v1/memo/${memo.uuid}`);
          case 'list': {
            const res = await api('GET', `/api/v1/memo?page_size=100&filters=${encodeURIComponent(JSON.stringify(requestFilters))}`, key);
            expect(res.status, where).toBe(200);
            const uuids = res.body.results.map((m: Json) => m.uuid as string);
            allInSpace(uuids);
            // And nothing inside both is left out.
            expect(uuids.sort()).toEqual(memos.filter((m) => inSpace(m, [...filters, ...requestFilters])).map((m) => m.uuid).sort());
            return;
          }
          case 'title_contains':
          case 'title_startswith':
          case 'chunk_vector_search': {
            const res = await api('POST', '/api/v1/search', key, { query: word, search_method: route, limit: 50, filters: requestFilters });
            expect(res.status, where).toBe(200);
            return allInSpace(res.body.results.map((r: Json) => r.memo_uuid));
          }
          case 'chat':
          case 'generate': {
            const res = await api('POST', `/api/v1/${route}`, key, route === 'chat' ? { query: `What about ${word}?`, filters: requestFilters } : { prompt: `Notes on ${word}`, filters: requestFilters });
            expect(res.status, where).toBe(200);
            return allInSpace(res.body.citations.map((c: Json) => c.memo_uuid));
          }
          case 'mcp.get_memo':
          case 'mcp.update_memo':
          case 'mcp.delete_memo': {
            if (route === 'mcp.delete_memo' && inside) return;
            const args = route === 'mcp.update_memo' ? { memo_id: memo.uuid, title: memo.title } : { memo_id: memo.uuid };
            const out = await tool(key, route.slice(4), args);
            if (!inside) expect({ where, text: out.content[0]!.text }).toEqual({ where, text: 'Memex API error 404: Memo not found' });
            else expect(out.isError, where).toBeFalsy();
            return;
          }
          case 'mcp.list_memos': {
            const out = await tool(key, 'list_memos', { page_size: 100, filters: requestFilters });
            return allInSpace(out.structuredContent!.results.map((m: Json) => m.uuid));
          }
          case 'mcp.search': {
            const out = await tool(key, 'search', { query: word, limit: 50, filters: requestFilters });
            return allInSpace(out.structuredContent!.results.map((r: Json) => r.memo_uuid));
          }
          case 'mcp.ask':
          case 'mcp.generate': {
            const out = route === 'mcp.ask' ? await tool(key, 'ask', { query: `What about ${word}?`, filters: requestFilters }) : await tool(key, 'generate', { prompt: `Notes on ${word}`, filters: requestFilters });
            expect(out.isError, `${where}: ${out.content[0]?.text}`).toBeFalsy();
            return allInSpace(out.structuredContent!.citations.map((c: Json) => c.memo_uuid));
          }
          default: {
            const never: never = route;
            throw new Error(`unknown route ${String(never)}`);
          }
        }
      }),
      { numRuns: RUNS, seed: 49 },
    );
    // Every route and every space was tried, and the memos are all still there.
    expect([...counts.keys()].sort()).toEqual([...ROUTES].sort());
    for (const m of memos) expect((await api('GET', `/api/v1/memo/${m.uuid}`, owner)).body.title).toBe(m.title);
  }, 600_000);
});
