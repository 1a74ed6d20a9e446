import { truncateAtWord } from '@memex/text';
import type { ChatResponse, Message, Ollama, ToolCall } from 'ollama';
import { CallScope, abortReason, raceAbort } from './abort';
import type { AnswerRequest, AnswerResult, HistoryTurn, LlmProvider, ModelSummary, TokenSink } from './port';
import { MAX_QUERY_CHARS, SEARCH_TOOL, SEARCH_TOOL_NAME, SUMMARY_FORMAT, firstLine, initialMessages, rewriteMessages, summaryMessages } from './prompting';
import { UnusableSummaryError, readSummaryReply } from './summaryReply';
import { ToolAnswer } from './toolAnswer';

export interface OllamaProviderOptions {
  /** Base URL of the Ollama server, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** A pulled model that supports tool calling. */
  model: string;
  /** Context window passed as `options.num_ctx` on every call. */
  numCtx: number;
  /**
   * Longest one HTTP call to Ollama may take, from request to the end of its reply, including a
   * server that never answers or stalls mid-stream. Time spent waiting on a slow token reader does
   * not count: that is our client's pace, not Ollama's.
   */
  timeoutMs: number;
  /** Searches the model may run per answer; after that it must answer without tools. */
  maxToolCalls: number;
  /** Sent as `options.num_predict` on every call (LLM_MAX_TOKENS); unset, Ollama's default. */
  maxTokens?: number;
  /** For tests and proxies; defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

/** Ollama answered with an error (an HTTP status with `{ error }`, or an `{ error }` line mid-stream). */
export class OllamaError extends Error {
  constructor(
    message: string,
    /** HTTP status, when the error came as one. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OllamaError';
  }
}

/** One Ollama call took longer than `timeoutMs`. */
export class OllamaTimeoutError extends Error {
  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super(`Ollama timed out: no complete reply to ${operation} within ${timeoutMs} ms`);
    this.name = 'OllamaTimeoutError';
  }
}

function queryOf(call: ToolCall): string | undefined {
  let args: unknown = call.function?.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  const query = (args as { query?: unknown } | null)?.query;
  if (typeof query !== 'string' || query.trim() === '') return undefined;
  return query.trim().slice(0, MAX_QUERY_CHARS);
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Ollama's own errors keep Ollama's message; transport failures say what happened to the connection. */
function toProviderError(error: unknown, host: string): unknown {
  if (!(error instanceof Error)) return error;
  const status = (error as { status_code?: unknown }).status_code;
  if (error.name === 'ResponseError' && typeof status === 'number') return new OllamaError(error.message, status, { cause: error });
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = error.cause as { code?: string; message?: string } | undefined;
    return new OllamaError(`cannot reach Ollama at ${host}: ${cause?.code ?? cause?.message ?? error.message}`, undefined, { cause: error });
  }
  if ((error instanceof TypeError && error.message === 'terminated') || /did not receive done/i.test(error.message))
    return new OllamaError('Ollama closed the connection before the reply was complete', undefined, { cause: error });
  return error;
}

interface Round {
  content: string;
  toolCalls: ToolCall[];
}

/**
 * Answers, documents and summaries from a model served by Ollama. Answers are a tool-calling loop:
 * the model sees the first retrieval's passages and may call `search_memos` for more (bounded by
 * `maxToolCalls`); every round streams. Retrieved text reaches the model only inside delimited
 * passage blocks it is told never to obey, and the search tool accepts nothing but a query.
 */
export class OllamaProvider implements LlmProvider {
  readonly name = 'ollama';
  private readonly baseFetch: typeof fetch;

  constructor(private readonly options: OllamaProviderOptions) {
    this.baseFetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async answer(request: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> {
    if (signal.aborted) throw abortReason(signal);
    const answer = new ToolAnswer(request, this.options.maxToolCalls, onToken, signal);
    const messages: Message[] = initialMessages(request, this.options.maxToolCalls > 0);
    for (;;) {
      const canSearch = answer.searchesLeft;
      answer.startRound();
      const round = await this.streamRound(messages, canSearch, answer.write, signal);
      await answer.endRound();
      if (!canSearch || round.toolCalls.length === 0) break;
      messages.push({ role: 'assistant', content: round.content, tool_calls: round.toolCalls });
      for (const call of round.toolCalls) {
        const name = call.function?.name;
        const reply = await answer.call(name, queryOf(call));
        messages.push({ role: 'tool', tool_name: name ?? SEARCH_TOOL_NAME, content: reply });
      }
    }
    return answer.result();
  }

  private streamRound(messages: Message[], canSearch: boolean, write: (text: string) => Promise<void>, signal: AbortSignal): Promise<Round> {
    return this.call(signal, 'chat', this.options.timeoutMs, async (scope, client) => {
      const stream = await raceAbort(
        client.chat({
          model: this.options.model,
          messages,
          stream: true,
          ...(canSearch ? { tools: [SEARCH_TOOL] } : {}),
          options: { num_ctx: this.options.numCtx, ...this.predictLimit() },
        }),
        scope.signal,
      );
      const parts = stream[Symbol.asyncIterator]();
      const round: Round = { content: '', toolCalls: [] };
      try {
        for (;;) {
          const next: IteratorResult<ChatResponse> = await raceAbort(parts.next(), scope.signal);
          if (next.done) break;
          const message = next.value.message;
          if (message?.tool_calls?.length) round.toolCalls.push(...message.tool_calls);
          const piece = message?.content ?? '';
          if (piece === '') continue;
          round.content += piece;
          scope.pause();
          try {
            await raceAbort(write(piece), scope.signal);
          } finally {
            scope.resume();
          }
        }
      } finally {
        if (scope.signal.aborted) stream.abort();
      }
      return round;
    });
  }

  async summarize(content: string, signal?: AbortSignal): Promise<ModelSummary> {
    const maxChars = Math.max(2_000, (this.options.numCtx - 600) * 3);
    const note = content.length > maxChars ? truncateAtWord(content, maxChars) : content;
    const messages = summaryMessages(note);
    let problem: UnusableSummaryError | undefined;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const reply = await this.call(signal, 'summarize', this.options.timeoutMs, (scope, client) =>
        raceAbort(
          client.chat({ model: this.options.model, messages, stream: false, format: SUMMARY_FORMAT, options: { num_ctx: this.options.numCtx, temperature: 0, ...this.predictLimit() } }),
          scope.signal,
        ),
      );
      try {
        return readSummaryReply(reply.message?.content);
      } catch (error) {
        if (!(error instanceof UnusableSummaryError)) throw error;
        problem = error;
      }
    }
    throw problem!;
  }

  async rewriteQuery(input: string, history: HistoryTurn[], signal: AbortSignal): Promise<string> {
    const messages = rewriteMessages(input, history) as Message[];
    const reply = await this.call(signal, 'query rewrite', this.options.timeoutMs, (scope, client) =>
      raceAbort(client.chat({ model: this.options.model, messages, stream: false, options: { num_ctx: this.options.numCtx, temperature: 0 } }), scope.signal),
    );
    return firstLine(reply.message?.content ?? '');
  }

  private predictLimit(): { num_predict?: number } {
    return this.options.maxTokens ? { num_predict: this.options.maxTokens } : {};
  }

  async readiness(): Promise<{ ready: boolean; details: Record<string, unknown> }> {
    const { host, model } = this.options;
    const details: Record<string, unknown> = { provider: this.name, host, model };
    try {
      return await this.call(undefined, 'readiness check', Math.min(this.options.timeoutMs, 5_000), async (scope, client) => {
        const [tags, version] = await raceAbort(Promise.all([client.list(), client.version().catch(() => undefined)]), scope.signal);
        if (version?.version) details.version = version.version;
        const pulled = (tags.models ?? []).some((m) => sameModel(m.name, model) || sameModel(m.model, model));
        if (!pulled) return { ready: false, details: { ...details, error: `model ${model} is not pulled; run: ollama pull ${model}` } };
        // Older servers do not report capabilities; only a list without "tools" is a definite no.
        const shown = await raceAbort(client.show({ model }), scope.signal).catch((error: unknown) => {
          if (scope.signal.aborted) throw error;
          return undefined;
        });
        const capabilities = shown?.capabilities;
        if (Array.isArray(capabilities) && !capabilities.includes('tools'))
          return { ready: false, details: { ...details, capabilities, error: `model ${model} does not support tool calling; set OLLAMA_MODEL to a model with tool support` } };
        return { ready: true, details: { ...details, ...(Array.isArray(capabilities) ? { capabilities } : {}) } };
      });
    } catch (error) {
      return { ready: false, details: { ...details, error: describeError(error) } };
    }
  }

  /** Runs one Ollama call with its own client, deadline and abort; see {@link CallScope}. */
  private async call<T>(signal: AbortSignal | undefined, operation: string, timeoutMs: number, run: (scope: CallScope, client: Ollama) => Promise<T>): Promise<T> {
    // (the client library is loaded on the first call: a stack without Ollama never pays for it)
    const { Ollama } = await import('ollama');
    const scope = new CallScope(signal, timeoutMs, operation, (op, ms) => new OllamaTimeoutError(op, ms));
    const client = new Ollama({ host: this.options.host, fetch: scope.fetch(this.baseFetch) });
    try {
      return await run(scope, client);
    } catch (error) {
      throw scope.signal.aborted ? abortReason(scope.signal) : toProviderError(error, this.options.host);
    } finally {
      scope.dispose();
    }
  }
}

/** `llama3.1` names the same model as `llama3.1:latest`. */
function sameModel(listed: string | undefined, wanted: string): boolean {
  if (!listed) return false;
  const withTag = (name: string) => (name.includes(':') ? name : `${name}:latest`);
  return withTag(listed) === withTag(wanted);
}
