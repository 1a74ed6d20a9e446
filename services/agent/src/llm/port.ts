import type { IntermediateStep, SummarySource } from '@memex/contracts';

/** A chunk the agent may use as context, numbered as the [n] markers will cite it. */
export interface Passage {
  n: number;
  memoId: string;
  memoTitle: string;
  chunkId: string;
  content: string;
  distance: number;
}

export interface HistoryTurn {
  role: 'user' | 'model';
  content: string;
}

export interface AnswerRequest {
  kind: 'chat' | 'generate';
  /** The user's question (chat) or the document request (generate). */
  input: string;
  /** generate: style, format or structure rules. */
  rules?: string;
  /** chat: the client's system prompt, which guides but never widens what the agent may read. */
  systemPrompt?: string;
  history: HistoryTurn[];
  /** What the first retrieval found for `input` within the caller's project and filters. */
  passages: Passage[];
  /**
   * More retrieval, for providers that let the model search again: bound on the server to the
   * caller's project and filters; the model chooses only the query text. New passages continue
   * the numbering.
   */
  search: (query: string) => Promise<Passage[]>;
}

export interface AnswerResult {
  text: string;
  /** The retrieval steps the answer rests on, for `intermediate_steps`. */
  steps: IntermediateStep[];
  /** Every passage the provider saw (initial and from its own searches), by their numbers. */
  passages: Passage[];
}

/**
 * A summary as a provider read it. `tags` may be empty (a prose reply without a tags line): the
 * summary processor then takes the extractive tagger's.
 */
export interface ModelSummary {
  summary: string;
  tags: string[];
  source: Exclude<SummarySource, 'extractive-fallback'>;
}

/** Called for each piece of generated text; awaiting it is how a slow reader slows generation. */
export type TokenSink = (text: string) => Promise<void>;

/**
 * The language model behind summaries, tags, chat and generate. Adapters: the built-in extractive
 * provider (offline, deterministic) and Ollama.
 */
export interface LlmProvider {
  readonly name: string;
  /**
   * A summary (at most 3 sentences' worth) and up to 8 lowercase tags for a memo's content, read
   * leniently from whatever the model wrote; throws when the model cannot be reached, fails, or
   * replies with nothing usable.
   */
  summarize(content: string, signal?: AbortSignal): Promise<ModelSummary>;
  /** Streams an answer or document through `onToken` and returns it whole; stops when `signal` aborts. */
  answer(request: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult>;
  /**
   * Optional: turns a follow-up question into a standalone search query using the conversation
   * (rag_config.query_rewrite). Providers without it get a heuristic rewrite from the agent.
   */
  rewriteQuery?(input: string, history: HistoryTurn[], signal: AbortSignal): Promise<string>;
  /** Whether the provider can serve now (e.g. Ollama reachable and the model pulled), and why not. */
  readiness(): Promise<{ ready: boolean; details: Record<string, unknown> }>;
}
