import { randomUUID } from 'node:crypto';
import { openEventStream } from '../http/eventStream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  Chat,
  ChatBody,
  ChatListQuery,
  ChatListResponse,
  ChatParams,
  ChatResponse,
  ErrorResponse,
  GenerateBody,
  GenerateResponse,
  MemexError,
  Subjects,
  errorText,
  isUuid,
  parseChatBody,
  parseChatListQuery,
  parseGenerateBody,
  type AgentChatReply,
  type AgentChatRequest,
  type AgentGenerateReply,
  type AgentGenerateRequest,
  type ChatCursor,
  type ChatGetReply,
  type ChatGetRequest,
  type ChatListRequest,
  type StreamAccepted,
  type StreamEvent,
} from '@memex/contracts';
import { ChatOwners, TokenStreamReader, chatListItem, query } from '@memex/runtime';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { noteMemoIds, noteQuery } from '../auth/scopes';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse, 500: ErrorResponse };

/** Sent as an SSE comment while the model is quiet, so proxies keep the connection. */
const SSE_KEEPALIVE_MS = 15_000;

type AgentReply = AgentChatReply | AgentGenerateReply;

/**
 * Starts an answer on the agent and follows its token stream. The reader subscribes before the
 * request goes out, so no token is missed; the agent's immediate reply carries the errors that
 * decide the status (an unknown chat is 404) before any byte of a stream is written.
 */
async function startAnswer(deps: GatewayDeps, subject: string, body: AgentChatRequest | AgentGenerateRequest, requestId: string) {
  const streamId = randomUUID();
  const reader = new TokenStreamReader(deps.nc, streamId);
  try {
    const accepted = await query<unknown, StreamAccepted>(deps.nc, subject, { ...body, streamId }, {
      requestId,
      timeoutMs: deps.config.MEMEX_QUERY_TIMEOUT_MS,
    });
    return { reader, accepted };
  } catch (error) {
    reader.close();
    throw error;
  }
}

/** Collects the whole answer for a non-streamed request; a client that leaves cancels the work. */
async function collect(request: FastifyRequest, reader: TokenStreamReader, timeoutMs: number): Promise<AgentReply> {
  const onClose = () => reader.cancel('client disconnected');
  request.raw.socket.once('close', onClose);
  const timer = setTimeout(() => reader.cancel('timed out'), timeoutMs);
  try {
    for await (const message of reader) {
      if (message.kind === 'end') return message.reply;
      if (message.kind === 'fail') throw MemexError.fromWire(message.error);
    }
    throw new MemexError('AgentError', 'the answer stopped before it was complete');
  } finally {
    clearTimeout(timer);
    request.raw.socket.off('close', onClose);
  }
}

/**
 * Streams an answer as Server-Sent Events: `: ping` first, `token` events, a `citations` event,
 * then `done` (with `chat_id` for chat). A failure mid-stream is an `error` event followed by
 * `done`, which names only a chat that exists (`chatIds.onFailure`: the chat the request continued;
 * a new chat is stored only when its answer completes). Writes wait for the socket to drain before the next message is taken, so a slow reader
 * slows the model instead of filling memory; a client that goes away cancels the model's work.
 */
async function sse(
  request: FastifyRequest,
  reply: FastifyReply,
  reader: TokenStreamReader,
  timeoutMs: number,
  chatIds: { onSuccess?: string; onFailure?: string } = {},
): Promise<void> {
  let failed = true;
  const res = openEventStream(request, reply);
  let closed = false;
  const onClose = () => {
    closed = true;
    reader.cancel('client disconnected');
  };
  res.once('close', onClose);
  const write = async (chunk: string) => {
    if (closed) return;
    if (!res.write(chunk)) await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    });
  };
  const event = (data: StreamEvent) => write(`data: ${JSON.stringify(data)}\n\n`);
  const keepalive = setInterval(() => void write(': ping\n\n'), SSE_KEEPALIVE_MS);
  const timer = setTimeout(() => reader.cancel('timed out'), timeoutMs);
  try {
    await write(': ping\n\n');
    for await (const message of reader) {
      if (message.kind === 'token') await event({ type: 'token', content: message.content });
      else if (message.kind === 'citations') {
        noteMemoIds(request, message.citations.map((c) => c.memo_uuid));
        await event({ type: 'citations', citations: message.citations });
      }
      else if (message.kind === 'end') {
        failed = false;
        // Skald's shape: the references object travels as JSON text in `content`.
        if (message.reply.references) await event({ type: 'references', content: JSON.stringify(message.reply.references) });
        break;
      }
      else if (message.kind === 'fail') {
        const text = MemexError.fromWire(message.error).message;
        await event({ type: 'error', error: text, content: text });
        break;
      }
    }
  } catch (error) {
    if (!closed) {
      request.log.warn({ err: error }, 'stream failed');
      const text = error instanceof MemexError && error.code === 'AgentError' ? error.message : errorText('AgentError', 'the answer stream broke off');
      await event({ type: 'error', error: text, content: text });
    }
  } finally {
    clearInterval(keepalive);
    clearTimeout(timer);
  }
  if (!closed) {
    const chatId = failed ? chatIds.onFailure : chatIds.onSuccess;
    await event(chatId ? { type: 'done', chat_id: chatId } : { type: 'done' });
    res.off('close', onClose);
    res.end();
  }
}

/**
 * A chat of any length: the agent answers in pages that each fit a NATS message (a page may end inside
 * a message's content, which the next page continues); this joins them.
 */
async function readWholeChat(deps: GatewayDeps, projectId: string, chatId: string, requestId: string): Promise<Chat> {
  const options = { requestId, timeoutMs: deps.config.MEMEX_QUERY_TIMEOUT_MS };
  let cursor: ChatCursor | undefined;
  let chat: Chat | undefined;
  for (;;) {
    const page = await query<ChatGetRequest, ChatGetReply>(deps.nc, Subjects.query.agentChatGet, { projectId, chatId, ...(cursor ? { cursor } : {}) }, options);
    if (!chat) chat = { uuid: page.uuid, created_at: page.created_at, messages: [] };
    const [first, ...rest] = page.messages;
    const last = chat.messages.at(-1);
    if (cursor && cursor.offset > 0 && first && last) last.content += first.content;
    else if (first) chat.messages.push(first);
    chat.messages.push(...rest);
    if (!page.next) return chat;
    if (cursor && page.next.message === cursor.message && page.next.offset === cursor.offset) {
      throw new MemexError('Internal', undefined, { cause: new Error(`chat ${chatId}: a page made no progress`) });
    }
    cursor = page.next;
  }
}

export function agentRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const timeoutMs = deps.config.MEMEX_AGENT_TIMEOUT_MS;
  // Scoped callers see and continue only the chats they started.
  let owners: Promise<ChatOwners> | undefined;
  const chatOwners = () =>
    (owners ??= ChatOwners.open(deps.nc, deps.config.MEMEX_NATS_REPLICAS).catch((error: unknown) => {
      owners = undefined;
      throw error;
    }));

  app.post(
    '/api/v1/chat',
    {
      config: { access: { scope: 'chat', action: 'chat' } },
      schema: {
        operationId: 'chat',
        summary: 'Ask the agent',
        description:
          'Retrieves context from the project (within `filters`), answers with [n] citations, and keeps the chat. ' +
          '`chat_id` continues a chat. With `stream: true` the answer comes as Server-Sent Events: `: ping`, ' +
          '`{"type":"token","content"}`…, `{"type":"citations","citations"}`, with `rag_config.references.enabled` ' +
          '`{"type":"references","content"}` (the references object as JSON text), then `{"type":"done","chat_id"}`; a failure ' +
          'mid-stream is `{"type":"error","content"}` then done, without `chat_id` if the chat was new (it was not stored). `rag_config` tunes retrieval per request (candidates, ' +
          'similarity threshold, reranking, query rewrite), names the LLM provider (must be the configured one) and, ' +
          'with `references.enabled`, adds `references` (the chunks the model was given, keyed by the n of their [n] marker).',
        tags: ['agent'],
        body: ChatBody,
        response: { 200: ChatResponse, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.body));
      const input = parseChatBody(request.body);
      noteQuery(request, input.query);
      if (!ctx.caller.owner && input.chatId !== undefined && !(await (await chatOwners()).owns(ctx.caller, input.chatId))) throw new MemexError('ChatNotFound');
      const body: AgentChatRequest = {
        projectId: ctx.projectId,
        query: input.query,
        // The caller's space, ANDed into the first retrieval and every tool call the agent makes.
        filters: [...ctx.space, ...input.filters],
        ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
        ...(input.chatId !== undefined ? { chatId: input.chatId } : {}),
        ...(input.rag ? { rag: input.rag } : {}),
      };
      const { reader, accepted } = await startAnswer(deps, Subjects.query.agentChat, body, ctx.requestId);
      if (!ctx.caller.owner && input.chatId === undefined && accepted.chatId) await (await chatOwners()).record(ctx.caller, accepted.chatId);
      if (input.stream) {
        // The agent names the chat when it accepts; the done event carries the id once the chat is
        // stored (the answer completed), or when the request continued a chat that already exists.
        await sse(request, reply, reader, timeoutMs, { onSuccess: accepted.chatId, ...(input.chatId !== undefined ? { onFailure: accepted.chatId } : {}) });
        return reply;
      }
      const answer = (await collect(request, reader, timeoutMs)) as AgentChatReply;
      noteMemoIds(request, answer.citations.map((c) => c.memo_uuid));
      return {
        ok: true,
        response: answer.response,
        intermediate_steps: answer.intermediateSteps,
        chat_id: answer.chatId,
        citations: answer.citations,
        ...(answer.references ? { references: answer.references } : {}),
      };
    },
  );

  app.post(
    '/api/v1/generate',
    {
      config: { access: { scope: 'generate', action: 'generate' } },
      schema: {
        operationId: 'generate',
        summary: 'Generate a document',
        description:
          'Retrieves context for the prompt (within `filters`) and writes a Markdown document following `rules`, ' +
          'citing its sources as [n] (listed in `citations`). `stream: true` streams it like chat. `rag_config` as for chat.',
        tags: ['agent'],
        body: GenerateBody,
        response: { 200: GenerateResponse, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.body));
      const input = parseGenerateBody(request.body);
      noteQuery(request, input.prompt);
      const body: AgentGenerateRequest = {
        projectId: ctx.projectId,
        prompt: input.prompt,
        filters: [...ctx.space, ...input.filters],
        ...(input.rules !== undefined ? { rules: input.rules } : {}),
        ...(input.rag ? { rag: input.rag } : {}),
      };
      const { reader } = await startAnswer(deps, Subjects.query.agentGenerate, body, ctx.requestId);
      if (input.stream) {
        await sse(request, reply, reader, timeoutMs);
        return reply;
      }
      const answer = await collect(request, reader, timeoutMs);
      noteMemoIds(request, answer.citations.map((c) => c.memo_uuid));
      return {
        ok: true,
        response: answer.response,
        intermediate_steps: answer.intermediateSteps,
        citations: answer.citations,
        ...(answer.references ? { references: answer.references } : {}),
      };
    },
  );

  app.get(
    '/api/v1/chat',
    {
      config: { access: { scope: 'chat', action: 'chat.list' } },
      schema: {
        operationId: 'listChats',
        summary: 'List chats',
        description: 'Newest first. `page` from 1; `page_size` 1–100 (default 20).',
        tags: ['agent'],
        querystring: ChatListQuery,
        response: { 200: ChatListResponse, ...errors },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const page = parseChatListQuery(request.query as Record<string, unknown>);
      if (!ctx.caller.owner) {
        const ids = await (await chatOwners()).chatsOf(ctx.caller);
        const slice = ids.slice((page.page - 1) * page.pageSize, page.page * page.pageSize);
        const chats = await Promise.all(slice.map((id) => readWholeChat(deps, ctx.projectId, id, ctx.requestId).catch(() => undefined)));
        const results = chats.filter((c): c is Chat => c !== undefined).map(chatListItem);
        return { results, count: ids.length, page: page.page, page_size: page.pageSize, total_pages: Math.ceil(ids.length / page.pageSize) };
      }
      return query<ChatListRequest, ChatListResponse>(deps.nc, Subjects.query.agentChatList, { projectId: ctx.projectId, ...page }, {
        requestId: ctx.requestId,
        timeoutMs: deps.config.MEMEX_QUERY_TIMEOUT_MS,
      });
    },
  );

  app.get(
    '/api/v1/chat/:chat_uuid',
    {
      config: { access: { scope: 'chat', action: 'chat.read' } },
      schema: { operationId: 'getChat', summary: 'Read a chat', description: 'Its messages in order.', tags: ['agent'], params: ChatParams, response: { 200: Chat, ...errors } },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const chatId = (request.params as { chat_uuid: string }).chat_uuid;
      if (!isUuid(chatId)) throw new MemexError('ChatNotFound');
      if (!ctx.caller.owner && !(await (await chatOwners()).owns(ctx.caller, chatId.toLowerCase()))) throw new MemexError('ChatNotFound');
      return readWholeChat(deps, ctx.projectId, chatId.toLowerCase(), ctx.requestId);
    },
  );
}
