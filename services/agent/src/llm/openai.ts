/**
 * An LLM provider for any server that speaks OpenAI's `/v1/chat/completions` (vLLM, llama.cpp
 * server, LM Studio, Ollama's `/v1`, TGI, hosted APIs). Plain `fetch` and our own SSE reader rather
 * than the `openai` SDK: the servers we target differ from api.openai.com in what they accept
 * (tools, `response_format`), the timeout must pause while our own reader is slow (the SDK's
 * cannot), and retries must never replay a reply that already streamed tokens to a client.
 */
import { truncateAtWord } from '@memex/text';
import { CallScope, abortReason, raceAbort } from './abort';
import { MAX_QUERY_CHARS, SEARCH_TOOL, firstLine, initialMessages, rewriteMessages, summaryMessages } from './prompting';
import { UnusableSummaryError, readSummaryReply } from './summaryReply';
import { parseRetryAfter } from './retryAfter';
import type { AnswerRequest, AnswerResult, HistoryTurn, LlmProvider, ModelSummary, TokenSink } from './port';
import { ToolAnswer } from './toolAnswer';

export interface OpenAiProviderOptions {
  /** Base URL as the OpenAI SDKs take it, ending in the API version: `http://host:8000/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set; local servers usually need none. */
  apiKey?: string;
  /** The model to ask; unset, the first model the server lists at `/models` (fetched once). */
  model?: string;
  /**
   * Longest one HTTP call may take, from request to the end of its reply, stalls included; time
   * spent waiting on our own slow token reader does not count.
   */
  timeoutMs: number;
  /** Searches the model may run per answer through tool calls. */
  maxToolCalls: number;
  /** Sent as `max_tokens` on every completion (LLM_MAX_TOKENS); unset, the server's default. */
  maxTokens?: number;
  /**
   * `auto`: offer the search tool, and answer retrieval-first (passages in the prompt, no tools)
   * once the server rejects tools. `off`: never offer tools.
   */
  tools: 'auto' | 'off';
  /** Retries of a call that got 429 or 5xx (or no connection) before any token was streamed. */
  maxRetries: number;
  /** First backoff; doubles each retry, with jitter; a `Retry-After` header wins (capped at 30 s). */
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

/** The server answered with an error status or an `{ error }` object in the stream. */
export class OpenAiError extends Error {
  /** What the server's `Retry-After` asked for (429/5xx), uncapped; callers bound it. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(message, options);
    this.name = 'OpenAiError';
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export class OpenAiTimeoutError extends Error {
  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super(`the OpenAI-compatible server timed out: no complete reply to ${operation} within ${timeoutMs} ms`);
    this.name = 'OpenAiTimeoutError';
  }
}

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface Round {
  content: string;
  toolCalls: WireToolCall[];
}

const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const MAX_RETRY_AFTER_MS = 30_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Reads a `text/event-stream` body into the JSON of each `data:` event, ending at `[DONE]` or the
 * end of the body. Events may span several `data:` lines (joined by newlines, per the SSE spec);
 * comments (`:`) and other fields are skipped.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r?\n|\r/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) {
            const payload = data.join('\n');
            data = [];
            if (payload.trim() === '[DONE]') return;
            yield JSON.parse(payload);
          }
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
      if (done) break;
    }
    const payload = [...data, ...(buffer.startsWith('data:') ? [buffer.slice(5).trimStart()] : [])].join('\n').trim();
    if (payload !== '' && payload !== '[DONE]') yield JSON.parse(payload);
  } finally {
    reader.releaseLock();
  }
}

function errorMessage(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const error = (value as { error?: unknown }).error;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  const detail = (value as { detail?: unknown; message?: unknown }).detail ?? (value as { message?: unknown }).message;
  return typeof detail === 'string' ? detail : undefined;
}

/** Servers that lack a feature reject it with 400/404/422 and usually name it in the message. */
function rejectsFeature(error: unknown, feature: RegExp): boolean {
  return error instanceof OpenAiError && error.status !== undefined && [400, 404, 422, 501].includes(error.status) && feature.test(error.message);
}

function queryFromArguments(raw: string): string | undefined {
  try {
    const query = (JSON.parse(raw) as { query?: unknown } | null)?.query;
    return typeof query === 'string' && query.trim() !== '' ? query.trim().slice(0, MAX_QUERY_CHARS) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Answers with a tool-calling loop like the Ollama provider's (first retrieval in the prompt,
 * `search_memos` for more), falling back to retrieval-first answering on servers that reject tools.
 */
export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai';
  private readonly baseFetch: typeof fetch;
  private readonly base: string;
  /** Learned from the server: once it rejects tools or `response_format`, we stop sending them. */
  private toolsRejected = false;
  private jsonModeRejected = false;
  private resolvedModel: string | undefined;

  constructor(private readonly options: OpenAiProviderOptions) {
    this.baseFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  /** The configured model, or the first one the server lists. */
  private async model(signal?: AbortSignal): Promise<string> {
    if (this.options.model) return this.options.model;
    if (this.resolvedModel) return this.resolvedModel;
    const ids = await this.listModels(signal);
    if (ids.length === 0) throw new OpenAiError(`${this.base}/models lists no model; set OPENAI_MODEL`);
    this.resolvedModel = ids[0]!;
    return this.resolvedModel;
  }

  private listModels(signal?: AbortSignal): Promise<string[]> {
    return this.call(signal, 'model list', Math.min(this.options.timeoutMs, 10_000), this.options.maxRetries, (scope) =>
      this.request(scope, 'GET', '/models', undefined, async (response) =>
        (((await response.json()) as { data?: { id?: unknown }[] }).data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string'),
      ),
    );
  }

  private get toolsOffered(): boolean {
    return this.options.tools !== 'off' && !this.toolsRejected && this.options.maxToolCalls > 0;
  }

  async answer(request: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> {
    if (signal.aborted) throw abortReason(signal);
    const answer = new ToolAnswer(request, this.options.maxToolCalls, onToken, signal);
    const model = await raceAbort(this.model(signal), signal);
    let messages: ChatMessage[] = initialMessages(request, this.toolsOffered) as ChatMessage[];
    for (;;) {
      const canSearch = this.toolsOffered && answer.searchesLeft;
      answer.startRound();
      let round: Round;
      try {
        round = await this.streamRound(model, messages, canSearch, answer.write, signal);
      } catch (error) {
        // Retrieval-first fallback: the passages are already in the prompt; ask again without tools.
        if (!canSearch || answer.started || !rejectsFeature(error, /tool|function/i)) throw error;
        this.toolsRejected = true;
        messages = initialMessages(request, false) as ChatMessage[];
        continue;
      }
      await answer.endRound();
      if (!canSearch || round.toolCalls.length === 0) break;
      messages.push({ role: 'assistant', content: round.content, tool_calls: round.toolCalls });
      for (const call of round.toolCalls) {
        const reply = await answer.call(call.function.name, queryFromArguments(call.function.arguments));
        messages.push({ role: 'tool', tool_call_id: call.id, content: reply });
      }
    }
    return answer.result();
  }

  private streamRound(model: string, messages: ChatMessage[], canSearch: boolean, write: (text: string) => Promise<void>, signal: AbortSignal): Promise<Round> {
    const body = {
      model,
      messages,
      stream: true,
      ...(this.options.maxTokens ? { max_tokens: this.options.maxTokens } : {}),
      ...(canSearch ? { tools: [SEARCH_TOOL], tool_choice: 'auto' } : {}),
    };
    return this.post(signal, 'chat', '/chat/completions', body, async (response, scope) => {
      if (!response.body) throw new OpenAiError('the server sent an empty reply');
      const round: Round = { content: '', toolCalls: [] };
      const calls = new Map<number, WireToolCall>();
      const events = sseEvents(response.body);
      for (;;) {
        const next = await raceAbort(events.next(), scope.signal);
        if (next.done) break;
        const problem = errorMessage(next.value);
        if (problem !== undefined) throw new OpenAiError(problem);
        const choice = (next.value as { choices?: { delta?: { content?: unknown; tool_calls?: unknown } }[] }).choices?.[0];
        const delta = choice?.delta;
        if (Array.isArray(delta?.tool_calls)) {
          for (const part of delta.tool_calls as { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]) {
            const index = part.index ?? calls.size;
            const call = calls.get(index) ?? { id: part.id ?? `call_${index}`, type: 'function' as const, function: { name: '', arguments: '' } };
            if (part.id) call.id = part.id;
            if (part.function?.name) call.function.name += part.function.name;
            if (part.function?.arguments) call.function.arguments += part.function.arguments;
            calls.set(index, call);
          }
        }
        const piece = typeof delta?.content === 'string' ? delta.content : '';
        if (piece === '') continue;
        round.content += piece;
        scope.pause();
        try {
          await raceAbort(write(piece), scope.signal);
        } finally {
          scope.resume();
        }
      }
      round.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      return round;
    });
  }

  async summarize(content: string, signal?: AbortSignal): Promise<ModelSummary> {
    const note = content.length > 24_000 ? truncateAtWord(content, 24_000) : content;
    const messages = summaryMessages(note);
    const model = await this.model(signal);
    let problem: UnusableSummaryError | undefined;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const jsonMode = !this.jsonModeRejected;
      const body = {
        model,
        messages,
        stream: false,
        temperature: 0,
        ...(this.options.maxTokens ? { max_tokens: this.options.maxTokens } : {}),
        ...(jsonMode ? { response_format: { type: 'json_object' } } : {}),
      };
      let reply: unknown;
      try {
        reply = await this.post(signal, 'summarize', '/chat/completions', body, (response) => response.json());
      } catch (error) {
        if (jsonMode && rejectsFeature(error, /response_format|json/i)) {
          this.jsonModeRejected = true;
          attempt -= 1;
          continue;
        }
        throw error;
      }
      const text = (reply as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
      try {
        return readSummaryReply(typeof text === 'string' ? text : undefined);
      } catch (error) {
        if (!(error instanceof UnusableSummaryError)) throw error;
        problem = error;
      }
    }
    throw problem!;
  }

  async rewriteQuery(input: string, history: HistoryTurn[], signal: AbortSignal): Promise<string> {
    const model = await this.model(signal);
    const body = { model, messages: rewriteMessages(input, history), stream: false, temperature: 0 };
    const reply = await this.post(signal, 'query rewrite', '/chat/completions', body, (response) => response.json());
    const text = (reply as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    return typeof text === 'string' ? firstLine(text) : '';
  }

  async readiness(): Promise<{ ready: boolean; details: Record<string, unknown> }> {
    const details: Record<string, unknown> = { provider: this.name, base_url: this.base, ...(this.options.model ? { model: this.options.model } : {}) };
    try {
      const ids = await this.call(undefined, 'readiness check', Math.min(this.options.timeoutMs, 5_000), 0, (scope) =>
        this.request(scope, 'GET', '/models', undefined, async (response) =>
          (((await response.json()) as { data?: { id?: unknown }[] }).data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string'),
        ),
      );
      const wanted = this.options.model;
      if (!wanted) {
        if (ids.length === 0) return { ready: false, details: { ...details, error: 'the server lists no model; set OPENAI_MODEL' } };
        return { ready: true, details: { ...details, model: ids[0] } };
      }
      // Some servers list nothing, or aliases only; an explicit list without our model is a definite no.
      if (ids.length > 0 && !ids.includes(wanted))
        return { ready: false, details: { ...details, models: ids.slice(0, 20), error: `model ${wanted} is not served; set OPENAI_MODEL to one of the listed models` } };
      return { ready: true, details };
    } catch (error) {
      return { ready: false, details: { ...details, error: error instanceof Error ? error.message : String(error) } };
    }
  }

  /** A POST with retries on 429/5xx/connection failures; `read` consumes the reply within the same deadline. */
  private post<T>(signal: AbortSignal | undefined, operation: string, path: string, body: unknown, read: (response: Response, scope: CallScope) => Promise<T>): Promise<T> {
    return this.call(signal, operation, this.options.timeoutMs, this.options.maxRetries, (scope) => this.request(scope, 'POST', path, body, read));
  }

  private async request<T>(scope: CallScope, method: string, path: string, body: unknown, read: (response: Response, scope: CallScope) => Promise<T>): Promise<T> {
    const headers: Record<string, string> = { accept: body === undefined ? 'application/json' : 'text/event-stream, application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await scope.fetch(this.baseFetch)(`${this.base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    } catch (error) {
      if (scope.signal.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new RetryableError(new OpenAiError(`cannot reach ${this.base}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, undefined, { cause: error }));
    }
    if (!response.ok) {
      const raw = await response.text().catch(() => '');
      let detail: string | undefined;
      try {
        detail = errorMessage(JSON.parse(raw));
      } catch {
        detail = raw.trim() || undefined;
      }
      const retryAfterMs = RETRYABLE.has(response.status) ? parseRetryAfter(response.headers.get('retry-after')) : undefined;
      const error = new OpenAiError(`${response.status} ${truncateAtWord(detail ?? response.statusText, 300)}`, response.status, { retryAfterMs });
      if (RETRYABLE.has(response.status)) throw new RetryableError(error, retryAfterMs === undefined ? undefined : Math.min(MAX_RETRY_AFTER_MS, retryAfterMs));
      throw error;
    }
    try {
      return await read(response, scope);
    } catch (error) {
      if (scope.signal.aborted) throw error;
      if (error instanceof OpenAiError) throw error;
      if (error instanceof SyntaxError) throw new OpenAiError(`the server sent a reply that is not JSON (${error.message})`, undefined, { cause: error });
      throw new OpenAiError('the server closed the connection before the reply was complete', undefined, { cause: error });
    }
  }

  /** One operation with its deadline and abort; retryable failures are tried again after a backoff. */
  private async call<T>(signal: AbortSignal | undefined, operation: string, timeoutMs: number, retries: number, run: (scope: CallScope) => Promise<T>): Promise<T> {
    const base = this.options.retryBaseMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      const scope = new CallScope(signal, timeoutMs, operation, (op, ms) => new OpenAiTimeoutError(op, ms));
      try {
        return await run(scope);
      } catch (error) {
        if (scope.signal.aborted) throw abortReason(scope.signal);
        if (!(error instanceof RetryableError)) throw error;
        if (attempt >= retries) throw error.error;
        const wait = error.retryAfterMs ?? base * 2 ** attempt * (0.75 + Math.random() * 0.5);
        if (signal) await sleep(wait, signal);
        else await new Promise((resolve) => setTimeout(resolve, wait));
      } finally {
        scope.dispose();
      }
    }
  }
}

/** Marks a failure before any reply was read, which is safe to try again. */
class RetryableError extends Error {
  constructor(
    readonly error: OpenAiError,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
    this.name = 'RetryableError';
  }
}
