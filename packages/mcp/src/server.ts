import type * as McpSdk from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type * as Zod from 'zod';
import { MemexApiError, type MemexClient } from '@memex/client';

export const MEMO_URI_PREFIX = 'memex://memo/';

/** The scope each tool needs (the REST route it calls); the memo resource goes with get_memo. */
export const TOOL_SCOPES: Record<string, string> = {
  search: 'search',
  ask: 'chat',
  generate: 'generate',
  create_memo: 'memos:write',
  get_memo: 'memos:read',
  list_memos: 'memos:read',
  update_memo: 'memos:write',
  delete_memo: 'memos:write',
};

/** The tool arguments several tools share, in the REST API's names. */
function sharedSchemas(z: typeof Zod.z) {
  const filter = z
    .object({
      field: z.string().describe('A native field (title, source, client_reference_id, tags) or a metadata key'),
      operator: z.enum(['eq', 'neq', 'contains', 'startswith', 'endswith', 'in', 'not_in']),
      value: z.union([z.string(), z.array(z.string())]).describe('A string; a list of strings for in / not_in'),
      filter_type: z.enum(['native_field', 'custom_metadata']),
    })
    .describe('One condition on memos; all conditions must hold');
  return {
    filters: z.array(filter).optional().describe('Restrict to memos matching every condition (optional)'),
    memoId: z.string().min(1).describe('The memo UUID, or your reference id when id_type is reference_id'),
    idType: z.enum(['memo_uuid', 'reference_id']).optional().describe('How memo_id is meant (default memo_uuid)'),
  };
}

/**
 * The MCP SDK and zod, imported by the first server made rather than with this module: their memory
 * and load time are not paid by a gateway whose clients never speak MCP. Imported once; the shared schemas are built once with them.
 */
let libraries: Promise<{ sdk: typeof McpSdk; z: typeof Zod.z; schemas: ReturnType<typeof sharedSchemas> }> | undefined;
function mcpLibraries() {
  libraries ??= Promise.all([import('@modelcontextprotocol/sdk/server/mcp.js'), import('zod')]).then(([sdk, { z }]) => ({ sdk, z, schemas: sharedSchemas(z) }));
  return libraries;
}

function result(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value as Record<string, unknown> };
}

/** API errors become tool errors the model can read (and act on), not protocol failures. */
async function call(work: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return result(await work());
  } catch (error) {
    const message = error instanceof MemexApiError ? `Memex API error ${error.status}: ${error.message}` : `Memex error: ${(error as Error).message}`;
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}

/**
 * An MCP server whose tools and resources act through `client`, so they have exactly the rights of
 * its key: the project, its isolation and its rate limit.
 */
export async function createMemexMcpServer(
  client: MemexClient,
  info: {
    version?: string;
    /** The key's scopes: only the tools they allow are listed (absent: an owner key, every tool). */
    scopes?: readonly string[];
  } = {},
): Promise<McpSdk.McpServer> {
  const {
    sdk: { McpServer, ResourceTemplate },
    z,
    schemas: { filters, memoId, idType },
  } = await mcpLibraries();
  const server = new McpServer(
    { name: 'memex', version: info.version ?? '0.1.0' },
    { instructions: 'Memex is a knowledge base of memos (text records). Use search or ask to find what it knows before answering from memory; cite memo titles.' },
  );
  const allowed = (tool: string) => !info.scopes || info.scopes.includes(TOOL_SCOPES[tool]!);

  if (allowed('search')) server.registerTool(
    'search',
    {
      title: 'Search memos',
      description:
        'Find passages in the knowledge base. chunk_vector_search (default) ranks text chunks by meaning and exact words; ' +
        'title_contains / title_startswith match memo titles. Returns memo_uuid, memo_title, the matching chunk_content and distance (lower is closer).',
      inputSchema: {
        query: z.string().min(1).describe('What to look for, in words'),
        search_method: z.enum(['chunk_vector_search', 'title_contains', 'title_startswith']).optional(),
        limit: z.number().int().min(1).max(50).optional().describe('Most results to return (default 10)'),
        filters,
      },
      annotations: { readOnlyHint: true },
    },
    ({ query, search_method, limit, filters }) =>
      call(() => client.search({ query, search_method: search_method ?? 'chunk_vector_search', ...(limit ? { limit } : {}), ...(filters ? { filters } : {}) })),
  );

  if (allowed('ask')) server.registerTool(
    'ask',
    {
      title: 'Ask the knowledge base',
      description:
        'Ask a question; Memex retrieves relevant memos and answers with [n] markers listed in citations (memo_uuid, memo_title). ' +
        'Pass the returned chat_id to ask a follow-up in the same conversation.',
      inputSchema: {
        query: z.string().min(1).describe('The question'),
        chat_id: z.string().uuid().optional().describe('Continue this conversation'),
        system_prompt: z.string().optional().describe('Extra instructions for the answer'),
        filters,
      },
    },
    ({ query, chat_id, system_prompt, filters }) =>
      call(async () => {
        const answer = await client.chat({ query, ...(chat_id ? { chat_id } : {}), ...(system_prompt ? { system_prompt } : {}), ...(filters ? { filters } : {}) });
        return { response: answer.response, citations: answer.citations, chat_id: answer.chat_id };
      }),
  );

  if (allowed('generate')) server.registerTool(
    'generate',
    {
      title: 'Write a document from the knowledge base',
      description: 'Write a Markdown document for the prompt from the memos it retrieves, citing them as [n] (listed in citations).',
      inputSchema: {
        prompt: z.string().min(1).describe('What to write'),
        rules: z.string().optional().describe('Format and length rules, e.g. "numbered lists, under 200 words"'),
        filters,
      },
    },
    ({ prompt, rules, filters }) =>
      call(async () => {
        const doc = await client.generate({ prompt, ...(rules ? { rules } : {}), ...(filters ? { filters } : {}) });
        return { response: doc.response, citations: doc.citations };
      }),
  );

  if (allowed('create_memo')) server.registerTool(
    'create_memo',
    {
      title: 'Store a memo',
      description:
        'Store a text in the knowledge base. Memex then summarizes, tags and indexes it (pending until done, usually seconds). ' +
        'Returns memo_uuid. reference_id is your own unique id for it in this project.',
      inputSchema: {
        title: z.string().min(1).max(255),
        content: z.string().min(1).describe('The text to store'),
        reference_id: z.string().min(1).max(255).optional(),
        tags: z.array(z.string().min(1).max(100)).max(100).optional(),
        source: z.string().max(255).optional().describe('Where the text comes from, e.g. a URL or system name'),
        metadata: z.record(z.string(), z.unknown()).optional().describe('Free-form JSON; filterable with custom_metadata filters'),
        expiration_date: z.string().optional().describe('ISO 8601; the memo stops feeding search after it'),
      },
    },
    (args) => call(() => client.createMemo(args)),
  );

  if (allowed('get_memo')) server.registerTool(
    'get_memo',
    {
      title: 'Read a memo',
      description: 'Read one memo: title, content, summary, tags, chunks, and pending (true while still being processed).',
      inputSchema: { memo_id: memoId, id_type: idType },
      annotations: { readOnlyHint: true },
    },
    ({ memo_id, id_type }) => call(() => client.getMemo(memo_id, id_type ? { idType: id_type } : {})),
  );

  if (allowed('list_memos')) server.registerTool(
    'list_memos',
    {
      title: 'List memos',
      description: 'List memos newest first, a page at a time, with their processing_status; filters narrow the list.',
      inputSchema: {
        page: z.number().int().min(1).optional(),
        page_size: z.number().int().min(1).max(100).optional().describe('Default 20'),
        filters,
      },
      annotations: { readOnlyHint: true },
    },
    ({ page, page_size, filters }) => call(() => client.listMemos({ ...(page ? { page } : {}), ...(page_size ? { page_size } : {}), ...(filters ? { filters } : {}) })),
  );

  if (allowed('update_memo')) server.registerTool(
    'update_memo',
    {
      title: 'Change a memo',
      description:
        'Change fields of a memo; give only what changes. New content starts processing again (summary, tags and chunks are rebuilt). ' +
        'metadata replaces the whole object; null clears source, client_reference_id or expiration_date.',
      inputSchema: {
        memo_id: memoId,
        id_type: idType,
        title: z.string().min(1).max(255).optional(),
        content: z.string().min(1).optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
        source: z.string().max(255).nullable().optional(),
        client_reference_id: z.string().min(1).max(255).nullable().optional(),
        expiration_date: z.string().nullable().optional(),
      },
    },
    ({ memo_id, id_type, ...changes }) =>
      call(() => client.updateMemo(memo_id, Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)), id_type ? { idType: id_type } : {})),
  );

  if (allowed('delete_memo')) server.registerTool(
    'delete_memo',
    {
      title: 'Delete a memo',
      description: 'Erase a memo and everything derived from it, everywhere. This cannot be undone.',
      inputSchema: { memo_id: memoId, id_type: idType },
      annotations: { destructiveHint: true },
    },
    ({ memo_id, id_type }) =>
      call(async () => {
        await client.deleteMemo(memo_id, id_type ? { idType: id_type } : {});
        return { ok: true, deleted: memo_id };
      }),
  );

  if (allowed('get_memo')) server.registerResource(
    'memo',
    new ResourceTemplate(`${MEMO_URI_PREFIX}{uuid}`, {
      list: async () => {
        try {
          const page = await client.listMemos({ page_size: 100 });
          return { resources: page.results.map((m) => ({ uri: `${MEMO_URI_PREFIX}${m.uuid}`, name: m.title, mimeType: 'text/markdown' })) };
        } catch {
          // A gateway without the memo list: the template still reads memos by uuid.
          return { resources: [] };
        }
      },
    }),
    { title: 'Memo', description: 'A memo as Markdown: title, summary, tags and content', mimeType: 'text/markdown' },
    async (uri, { uuid }) => {
      const memo = await client.getMemo(String(uuid));
      const tags = memo.tags.map((t) => t.tag).join(', ');
      const text = `# ${memo.title}\n\n${memo.summary ? `> ${memo.summary}\n\n` : ''}${tags ? `Tags: ${tags}\n\n` : ''}${memo.content}\n`;
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
    },
  );

  return server;
}
