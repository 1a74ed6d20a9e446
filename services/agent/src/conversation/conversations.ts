import {
  MemexError,
  type AgentChatReply,
  type AgentChatRequest,
  type AgentGenerateReply,
  type AgentGenerateRequest,
  type Chat,
  type ChatGetReply,
  type ChatGetRequest,
  type ChatListReply,
  type ChatListRequest,
  type IntermediateStep,
  type RagOptions,
  type References,
} from '@memex/contracts';
import { uuidV7, type Logger } from '@memex/runtime';
import { truncateAtWord } from '@memex/text';
import { ChatVersionConflictError, type ChatEvent, type ChatStore, type Incomplete } from '../chats/port';
import type { AnswerRequest, HistoryTurn, LlmProvider, Passage, TokenSink } from '../llm/port';
import { pageChat } from './chatPages';
import { citationsFrom } from './citations';
import type { Retriever, RetrievalScope } from './retrieval';

/** Longest chat title (the first user message, shortened at a word). */
const TITLE_CHARS = 200;
/** History turns given to the model: the most recent ones. */
const HISTORY_TURNS = 20;

export interface PreparedChat {
  request: AgentChatRequest;
  chatId: string;
  version: number;
  history: HistoryTurn[];
}

export interface AnswerLimits {
  /** Most streamed pieces (one per model token, as the servers stream them) in one answer (LLM_MAX_TOKENS). */
  maxTokens: number;
  /** Longest one whole answer may take, streaming included (LLM_TIMEOUT_MS). */
  timeoutMs: number;
}

export interface ConversationDeps {
  llm: LlmProvider;
  chats: ChatStore;
  retriever: Retriever;
  clock: () => Date;
  logger: Logger;
  limits?: AnswerLimits;
  /** Told of every model failure (for readiness and metrics). */
  onModelError?: (operation: 'chat' | 'generate', error: unknown) => void;
}

/** The abort reason of an answer cut by one of its limits. */
const LIMIT_REACHED = new Error('answer limit reached');

/** Wraps what went wrong while answering in the spec's `Agent error: <details>`. */
export function agentError(error: unknown): MemexError {
  if (error instanceof MemexError && error.code === 'AgentError') return error;
  const detail =
    error instanceof MemexError
      ? error.code === 'ServiceUnavailable' || error.code === 'Timeout'
        ? `search is unavailable (${error.message})`
        : error.message
      : String((error as Error)?.message ?? error);
  return new MemexError('AgentError', detail.slice(0, 500), { cause: error });
}

/**
 * Chat and generate: retrieve within the caller's project and filters, let the LLM answer (it may
 * search again, through the same fixed scope), cite, and keep the chat.
 */
export class Conversations {
  constructor(private readonly deps: ConversationDeps) {}

  /** Checks what must hold before any token is sent: a continued chat exists in this project. */
  async prepareChat(request: AgentChatRequest): Promise<PreparedChat> {
    this.checkRag(request.rag);
    if (!request.chatId) return { request, chatId: uuidV7(), version: 0, history: [] };
    const loaded = await this.deps.chats.load(request.chatId);
    if (!loaded || loaded.record.projectId !== request.projectId) throw new MemexError('ChatNotFound');
    const history: HistoryTurn[] = [];
    for (const e of loaded.events) if (e.type === 'MessageAdded') history.push({ role: e.data.sentBy, content: e.data.content });
    return { request, chatId: request.chatId, version: loaded.record.version, history: history.slice(-HISTORY_TURNS) };
  }

  /** What must hold before a generate starts: the same rag_config checks as chat. */
  prepareGenerate(request: AgentGenerateRequest): void {
    this.checkRag(request.rag);
  }

  /** `rag_config.llm_provider` must name the provider this agent answers with. */
  private checkRag(rag: RagOptions | undefined): void {
    if (rag?.llmProvider !== undefined && rag.llmProvider !== this.deps.llm.name)
      throw new MemexError('InvalidRequest', `rag_config.llm_provider '${rag.llmProvider}' is not configured on this server; it answers with '${this.deps.llm.name}'`);
  }

  /**
   * The part chat and generate share: retrieve for `input` (retrying with `fallback` beside it when
   * nothing is found), let the LLM answer with a search bound to the same scope, and collect the
   * citations and steps. Failures become `Agent error`; a cancellation keeps its own reason.
   */
  private async answer(
    scope: RetrievalScope,
    request: Omit<AnswerRequest, 'passages' | 'search'>,
    fallback: string | undefined,
    onToken: TokenSink,
    signal: AbortSignal,
    onPartial?: (text: string, incomplete: Incomplete) => Promise<void>,
  ): Promise<{ text: string; citations: AgentChatReply['citations']; steps: IntermediateStep[]; references?: References; incomplete?: Incomplete }> {
    let found;
    try {
      const searchText = scope.rag?.queryRewrite ? await this.rewrite(request, signal) : request.input;
      found = await this.deps.retriever.search(scope, searchText, 1);
      // A follow-up like "and what did it cost?" finds more with the previous question beside it.
      if (found.passages.length === 0 && fallback) found = await this.deps.retriever.search(scope, `${fallback} ${request.input}`, 1);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      // A bad rag_config the indexer refused (reranking without a reranker) stays a 400.
      if (error instanceof MemexError && error.code === 'InvalidRequest') throw error;
      throw agentError(error);
    }
    const seen = [...found.passages];
    const extraSteps: IntermediateStep[] = [];
    const search = async (text: string): Promise<Passage[]> => {
      const { passages, step } = await this.deps.retriever.search(scope, text, seen.length + 1);
      seen.push(...passages);
      extraSteps.push(step);
      return passages;
    };
    // The limits hold for every provider: past either one the answer ends with what was sent.
    const limits = this.deps.limits;
    const bound = new AbortController();
    const onAbort = () => bound.abort(signal.reason);
    if (signal.aborted) bound.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    let cut: Incomplete | undefined;
    const stop = (incomplete: Incomplete) => {
      cut ??= incomplete;
      bound.abort(LIMIT_REACHED);
    };
    const timer = limits ? setTimeout(() => stop({ reason: 'timeout', detail: `cut at LLM_TIMEOUT_MS=${limits.timeoutMs}` }), limits.timeoutMs) : undefined;
    let pieces = 0;
    let sent = '';
    const counted: TokenSink = async (text) => {
      if (limits && !cut && pieces >= limits.maxTokens) stop({ reason: 'max_tokens', detail: `cut at LLM_MAX_TOKENS=${limits.maxTokens}` });
      if (cut) throw LIMIT_REACHED;
      pieces += 1;
      sent += text;
      await onToken(text);
    };
    let result: { text: string; passages: Passage[] };
    try {
      result = await this.deps.llm.answer({ ...request, passages: found.passages, search }, counted, bound.signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (cut) {
        // The cut is named where the reader sees it, and in the answer's record.
        const note = `${sent === '' || /\s$/.test(sent) ? '' : ' '}[answer ${cut.detail}]`;
        await onToken(note).catch(() => undefined);
        result = { text: sent + note, passages: seen };
      }
      else {
        this.deps.onModelError?.(request.kind, error);
        const failure = agentError(error);
        if (sent !== '' && onPartial) await onPartial(sent, { reason: 'error', detail: failure.message });
        throw failure;
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    if (cut) this.deps.logger.warn({ kind: request.kind, ...cut }, 'answer cut at its limit');
    // Zero tokens is a model failure, not an answer: the client gets the agent error, not a blank.
    if (!cut && result.text.trim() === '') {
      const empty = Object.assign(new Error('the model sent an empty answer'), { kind: 'empty' });
      this.deps.onModelError?.(request.kind, empty);
      throw agentError(empty);
    }
    const references = scope.rag?.references ? referencesFrom(result.passages.length > 0 ? result.passages : seen) : undefined;
    return {
      text: result.text,
      citations: citationsFrom(result.text, seen),
      steps: [found.step, ...extraSteps],
      ...(references ? { references } : {}),
      ...(cut ? { incomplete: cut } : {}),
    };
  }

  /**
   * rag_config.query_rewrite: a follow-up becomes a standalone search query. The LLM writes it when
   * the provider can; otherwise (or when it fails) the previous question is put beside the new one.
   * A first question has nothing to resolve and is searched as asked.
   */
  private async rewrite(request: Omit<AnswerRequest, 'passages' | 'search'>, signal: AbortSignal): Promise<string> {
    if (request.history.length === 0) return request.input;
    if (this.deps.llm.rewriteQuery) {
      try {
        const rewritten = (await this.deps.llm.rewriteQuery(request.input, request.history, signal)).trim();
        if (rewritten !== '') return rewritten.slice(0, 1_000);
      } catch (error) {
        if (signal.aborted) throw error;
        this.deps.logger.warn({ err: error }, 'query rewrite failed; searching with the previous question beside the new one');
      }
    }
    const previous = [...request.history].reverse().find((h) => h.role === 'user')?.content;
    return previous ? `${previous} ${request.input}` : request.input;
  }

  async runChat(prepared: PreparedChat, onToken: TokenSink, signal: AbortSignal): Promise<AgentChatReply> {
    const { request, chatId, history } = prepared;
    const lastQuestion = [...history].reverse().find((h) => h.role === 'user')?.content;
    const { text, citations, steps, references, incomplete } = await this.answer(
      { projectId: request.projectId, filters: request.filters, ...(request.rag ? { rag: request.rag } : {}) },
      {
        kind: 'chat',
        input: request.query,
        ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
        history,
      },
      lastQuestion,
      onToken,
      signal,
      // A model that fails mid-answer: what the client already read is kept, marked incomplete.
      (partial, why) => this.record(prepared, partial, citationsFrom(partial, []), [], why),
    );
    await this.record(prepared, text, citations, steps, incomplete);
    return { chatId, response: text, intermediateSteps: steps, citations, ...(references ? { references } : {}) };
  }

  /** Appends the question and the answer; a concurrent turn on the same chat just moves us after it. */
  private async record(prepared: PreparedChat, answer: string, citations: AgentChatReply['citations'], steps: IntermediateStep[], incomplete?: Incomplete) {
    const { request, chatId } = prepared;
    const at = this.deps.clock().toISOString();
    const answeredAt = new Date(Math.max(Date.parse(at) + 1, this.deps.clock().getTime())).toISOString();
    let version = prepared.version;
    for (let attempt = 0; attempt < 5; attempt++) {
      const events: ChatEvent[] = [];
      if (version === 0) {
        events.push({ type: 'ChatStarted', data: { chatId, projectId: request.projectId, title: truncateAtWord(request.query.trim(), TITLE_CHARS), at } });
      }
      events.push(
        {
          type: 'MessageAdded',
          data: { messageId: uuidV7(), sentBy: 'user', content: request.query, clientSystemPrompt: request.systemPrompt ?? null, at },
        },
        {
          type: 'MessageAdded',
          data: {
            messageId: uuidV7(),
            sentBy: 'model',
            content: answer,
            clientSystemPrompt: null,
            at: answeredAt,
            citations,
            intermediateSteps: steps,
            ...(incomplete ? { incomplete } : {}),
          },
        },
      );
      try {
        await this.deps.chats.append(chatId, request.projectId, events, version);
        return;
      } catch (error) {
        if (!(error instanceof ChatVersionConflictError)) throw error;
        const loaded = await this.deps.chats.load(chatId);
        if (!loaded || loaded.record.projectId !== request.projectId) throw new MemexError('ChatNotFound');
        version = loaded.record.version;
      }
    }
    throw new Error(`could not record chat ${chatId}: too many concurrent turns`);
  }

  async runGenerate(request: AgentGenerateRequest, onToken: TokenSink, signal: AbortSignal): Promise<AgentGenerateReply> {
    this.checkRag(request.rag);
    const { text, citations, steps, references } = await this.answer(
      { projectId: request.projectId, filters: request.filters, ...(request.rag ? { rag: request.rag } : {}) },
      { kind: 'generate', input: request.prompt, ...(request.rules !== undefined ? { rules: request.rules } : {}), history: [] },
      undefined,
      onToken,
      signal,
    );
    return { response: text, intermediateSteps: steps, citations, ...(references ? { references } : {}) };
  }

  async listChats(request: ChatListRequest): Promise<ChatListReply> {
    const { chats, count } = await this.deps.chats.list(request.projectId, { page: request.page, pageSize: request.pageSize });
    return {
      results: chats.map((c) => ({
        uuid: c.chatId,
        created_at: c.createdAt,
        title: c.title,
        message_count: c.messageCount,
        last_message_at: c.lastMessageAt,
      })),
      count,
      page: request.page,
      page_size: request.pageSize,
      total_pages: Math.ceil(count / request.pageSize),
    };
  }

  /** One page of a chat, at most `budgetBytes` of JSON (see `pageChat`). */
  async getChatPage(request: ChatGetRequest, budgetBytes: number): Promise<ChatGetReply> {
    return pageChat(await this.getChat(request), request.cursor, budgetBytes);
  }

  async getChat(request: ChatGetRequest): Promise<Chat> {
    const loaded = await this.deps.chats.load(request.chatId);
    if (!loaded || loaded.record.projectId !== request.projectId) throw new MemexError('ChatNotFound');
    return {
      uuid: loaded.record.chatId,
      created_at: loaded.record.createdAt,
      messages: loaded.events.flatMap((e) =>
        e.type === 'MessageAdded'
          ? [
              {
                uuid: e.data.messageId,
                content: e.data.content,
                sent_by: e.data.sentBy,
                sent_at: e.data.at,
                client_system_prompt: e.data.clientSystemPrompt,
                ...(e.data.incomplete ? { incomplete: e.data.incomplete } : {}),
              },
            ]
          : [],
      ),
    };
  }
}

/**
 * The chunks the model was given, keyed by the n of their [n] marker (Skald's shape), so every
 * marker the model may write resolves; a chunk found by two searches appears under both numbers.
 */
function referencesFrom(passages: readonly Passage[]): References {
  const references: References = {};
  for (const p of [...passages].sort((a, b) => a.n - b.n)) references[String(p.n)] = { memo_uuid: p.memoId, memo_title: p.memoTitle, chunk_uuid: p.chunkId };
  return references;
}
