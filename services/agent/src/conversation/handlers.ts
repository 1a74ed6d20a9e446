import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import {
  MemexError,
  QueueGroups,
  Subjects,
  type AgentChatRequest,
  type AgentGenerateRequest,
  type ChatGetRequest,
  type ChatListRequest,
  type StreamAccepted,
} from '@memex/contracts';
import { TokenStreamWriter, serveQuery, type Logger } from '@memex/runtime';
import type { TokenSink } from '../llm/port';
import { agentError, type Conversations } from './conversations';

/**
 * Runs an answer onto a token stream: tokens as they come, then the citations, then `end` with the
 * whole reply; a failure ends it with `fail`. Cancellation (the reader left) aborts the LLM call.
 */
async function stream<R extends { citations: unknown[] }>(
  writer: TokenStreamWriter,
  run: (onToken: TokenSink, signal: AbortSignal) => Promise<R>,
  logger: Logger,
): Promise<void> {
  try {
    const reply = await run((text) => writer.send({ kind: 'token', content: text }), writer.signal);
    await writer.send({ kind: 'citations', citations: reply.citations as never });
    writer.finish({ kind: 'end', reply: reply as never });
  } catch (error) {
    if (writer.signal.aborted) {
      logger.info({ reason: String((writer.signal.reason as Error)?.message ?? writer.signal.reason) }, 'answer cancelled');
      writer.close();
      return;
    }
    const failure = agentError(error);
    logger.warn({ err: error }, 'answer failed');
    writer.finish({ kind: 'fail', error: failure.toWire() });
  }
}

const neverAborted = new AbortController().signal;

/**
 * Chat, generate and chat history queries. A request with a `streamId` is answered at once with
 * `StreamAccepted` (after the checks that decide its status, such as an unknown chat), and the answer
 * follows on the token stream; without one, the reply is the whole answer.
 */
export function serveConversations(nc: NatsConnection, conversations: Conversations, logger: Logger): Subscription[] {
  return [
    serveQuery<AgentChatRequest, unknown>(nc, {
      subject: Subjects.query.agentChat,
      queue: QueueGroups.agent,
      logger,
      handler: async (request, ctx) => {
        const prepared = await conversations.prepareChat(request);
        if (!request.streamId) {
          return conversations.runChat(prepared, async () => undefined, neverAborted).catch((e: unknown) => {
            throw e instanceof MemexError ? e : agentError(e);
          });
        }
        const writer = new TokenStreamWriter(nc, request.streamId);
        void stream(writer, (onToken, signal) => conversations.runChat(prepared, onToken, signal), ctx.logger);
        return { streamId: request.streamId, chatId: prepared.chatId } satisfies StreamAccepted;
      },
    }),
    serveQuery<AgentGenerateRequest, unknown>(nc, {
      subject: Subjects.query.agentGenerate,
      queue: QueueGroups.agent,
      logger,
      handler: async (request, ctx) => {
        if (!request.streamId) return conversations.runGenerate(request, async () => undefined, neverAborted);
        const writer = new TokenStreamWriter(nc, request.streamId);
        void stream(writer, (onToken, signal) => conversations.runGenerate(request, onToken, signal), ctx.logger);
        return { streamId: request.streamId } satisfies StreamAccepted;
      },
    }),
    serveQuery<ChatListRequest, unknown>(nc, {
      subject: Subjects.query.agentChatList,
      queue: QueueGroups.agent,
      logger,
      handler: (request) => conversations.listChats(request),
    }),
    serveQuery<ChatGetRequest, unknown>(nc, {
      subject: Subjects.query.agentChatGet,
      queue: QueueGroups.agent,
      logger,
      handler: (request) => conversations.getChat(request),
    }),
  ];
}
