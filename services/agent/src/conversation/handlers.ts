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
import { TokenStreamWriter, payloadBudget, serveQuery, type Logger, type Metrics } from '@memex/runtime';
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
  count: (outcome: string, tokens: number) => void,
  active: Set<TokenStreamWriter>,
): Promise<void> {
  active.add(writer);
  let tokens = 0;
  try {
    const reply = await run((text) => {
      tokens += 1;
      return writer.send({ kind: 'token', content: text });
    }, writer.signal);
    await writer.send({ kind: 'citations', citations: reply.citations as never });
    writer.finish({ kind: 'end', reply: reply as never });
    count('ok', tokens);
  } catch (error) {
    if (writer.signal.reason === SHUTTING_DOWN) {
      writer.finish({ kind: 'fail', error: new MemexError('AgentError', 'the agent stopped before the answer was complete; ask again').toWire() });
      count('interrupted', tokens);
      return;
    }
    if (writer.signal.aborted) {
      logger.info({ reason: String((writer.signal.reason as Error)?.message ?? writer.signal.reason) }, 'answer cancelled');
      writer.close();
      count('cancelled', tokens);
      return;
    }
    const failure = agentError(error);
    logger.warn({ err: error }, 'answer failed');
    writer.finish({ kind: 'fail', error: failure.toWire() });
    count('failed', tokens);
  } finally {
    active.delete(writer);
  }
}

const SHUTTING_DOWN = new Error('the agent is shutting down');

export interface ConversationServer {
  subscriptions: Subscription[];
  /** Ends every answer in progress with an error event, so clients are not left waiting. */
  interrupt(): Promise<void>;
}

/** Every answer streams: the gateway names the token stream, streamed to the client or not. */
function streamIdOf(request: { streamId?: string }): string {
  if (!request.streamId) throw new MemexError('InvalidRequest', 'streamId is required: answers are sent on a token stream');
  return request.streamId;
}

/**
 * Chat, generate and chat history queries. A request is answered at once with `StreamAccepted`
 * (after the checks that decide its status, such as an unknown chat), and the answer follows on
 * the token stream named by its `streamId`.
 */
export function serveConversations(nc: NatsConnection, conversations: Conversations, logger: Logger, metrics?: Metrics): ConversationServer {
  const active = new Set<TokenStreamWriter>();
  const answers = metrics?.counter('memex_answers_total', 'Streamed chat and generate answers, by outcome');
  const tokens = metrics?.counter('memex_tokens_streamed_total', 'Tokens streamed to clients');
  const count = (kind: string) => (outcome: string, n: number) => {
    answers?.inc({ kind, outcome });
    tokens?.inc({ kind }, n);
  };
  const subscriptions = [
    serveQuery<AgentChatRequest, unknown>(nc, {
      subject: Subjects.query.agentChat,
      queue: QueueGroups.agent,
      logger,
      ...(metrics ? { metrics } : {}),
      handler: async (request, ctx) => {
        const prepared = await conversations.prepareChat(request);
        const streamId = streamIdOf(request);
        const writer = new TokenStreamWriter(nc, streamId);
        void stream(writer, (onToken, signal) => conversations.runChat(prepared, onToken, signal), ctx.logger, count('chat'), active);
        return { streamId, chatId: prepared.chatId } satisfies StreamAccepted;
      },
    }),
    serveQuery<AgentGenerateRequest, unknown>(nc, {
      subject: Subjects.query.agentGenerate,
      queue: QueueGroups.agent,
      logger,
      ...(metrics ? { metrics } : {}),
      handler: async (request, ctx) => {
        conversations.prepareGenerate(request);
        const streamId = streamIdOf(request);
        const writer = new TokenStreamWriter(nc, streamId);
        void stream(writer, (onToken, signal) => conversations.runGenerate(request, onToken, signal), ctx.logger, count('generate'), active);
        return { streamId } satisfies StreamAccepted;
      },
    }),
    serveQuery<ChatListRequest, unknown>(nc, {
      subject: Subjects.query.agentChatList,
      queue: QueueGroups.agent,
      logger,
      ...(metrics ? { metrics } : {}),
      handler: (request) => conversations.listChats(request),
    }),
    serveQuery<ChatGetRequest, unknown>(nc, {
      subject: Subjects.query.agentChatGet,
      queue: QueueGroups.agent,
      logger,
      ...(metrics ? { metrics } : {}),
      // Paged to fit a NATS message: a long chat is many pages, which the gateway joins.
      handler: (request) => conversations.getChatPage(request, payloadBudget(nc)),
    }),
  ];
  return {
    subscriptions,
    async interrupt() {
      for (const writer of active) writer.abort(SHUTTING_DOWN);
      for (let waited = 0; active.size > 0 && waited < 2_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    },
  };
}
