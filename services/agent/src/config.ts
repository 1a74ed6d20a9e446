import { Type, type Static } from '@sinclair/typebox';
import { ConfigError, loadEnv, ServiceEnv } from '@memex/runtime';

export const AgentEnv = Type.Object({
  ...ServiceEnv.properties,
  OLLAMA_HOST: Type.Optional(Type.String({ description: 'Set to answer with Ollama instead of the built-in extractive provider' })),
  OLLAMA_MODEL: Type.String({ default: 'llama3.1:8b', description: 'Ollama model (must support tool calling)' }),
  OLLAMA_NUM_CTX: Type.Integer({ minimum: 512, default: 8192, description: 'Context window passed to Ollama' }),
  OLLAMA_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120_000, description: 'Longest one Ollama call may take' }),
  OLLAMA_MAX_TOOL_CALLS: Type.Integer({ minimum: 0, default: 4, description: 'Searches the model may run per answer' }),
  LLM_PROVIDER: Type.Optional(
    Type.Union([Type.Literal('extractive'), Type.Literal('ollama'), Type.Literal('openai')], {
      description: 'extractive, ollama or openai; unset: ollama when OLLAMA_HOST is set, else extractive',
    }),
  ),
  OPENAI_BASE_URL: Type.Optional(Type.String({ description: 'OpenAI-compatible API base, as the OpenAI SDKs take it, e.g. http://127.0.0.1:8000/v1' })),
  OPENAI_API_KEY: Type.Optional(Type.String({ description: 'Bearer key for the OpenAI-compatible server, if it needs one' })),
  OPENAI_MODEL: Type.Optional(Type.String({ description: 'Model to ask; unset: the first model the server lists at /models' })),
  OPENAI_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120_000, description: 'Longest one call may take (time our own slow reader holds a token does not count)' }),
  OPENAI_MAX_RETRIES: Type.Integer({ minimum: 0, maximum: 10, default: 2, description: 'Retries on 429/5xx/connection failure, before any token streamed' }),
  OPENAI_TOOLS: Type.Union([Type.Literal('auto'), Type.Literal('off')], {
    default: 'auto',
    description: 'auto: offer the search tool, answer retrieval-first if the server rejects tools; off: never offer tools',
  }),
  OPENAI_MAX_TOOL_CALLS: Type.Integer({ minimum: 0, default: 4, description: 'Searches the model may run per answer' }),
  LLM_MAX_TOKENS: Type.Integer({
    minimum: 16,
    default: 2048,
    description: 'Most tokens one answer or summary may have, for every provider; a longer stream is cut and its record says so',
  }),
  LLM_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 180_000,
    description: 'Longest one whole answer or summary attempt may take, streaming and the provider retries included',
  }),
  LLM_SUMMARY_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 10, default: 3, description: 'Model attempts per summary before the extractive fallback' }),
  LLM_SUMMARY_BACKOFF_MS: Type.Integer({ minimum: 0, default: 1000, description: 'Wait before the second summary attempt; doubles after' }),
  AGENT_TOP_K: Type.Integer({ minimum: 1, maximum: 50, default: 8, description: 'Chunks retrieved per question' }),
  AGENT_MAX_DISTANCE: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 1,
    description: 'Chunks farther than this (1 − fused relevance) are not used as context; 1 keeps all top-k',
  }),
  AGENT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 4, description: 'Memos summarized at once' }),
});
export type AgentConfig = Static<typeof AgentEnv>;

export function loadAgentConfig(env: Record<string, string | undefined>): AgentConfig {
  const config = loadEnv(AgentEnv, env);
  if (config.LLM_PROVIDER === 'openai' && !config.OPENAI_BASE_URL) throw new ConfigError('Invalid configuration: OPENAI_BASE_URL is missing: LLM_PROVIDER=openai needs it');
  if (config.LLM_PROVIDER === 'ollama' && !config.OLLAMA_HOST) throw new ConfigError('Invalid configuration: OLLAMA_HOST is missing: LLM_PROVIDER=ollama needs it');
  return config;
}

/** The provider this configuration answers with. */
export function llmProviderName(config: AgentConfig): 'extractive' | 'ollama' | 'openai' {
  return config.LLM_PROVIDER ?? (config.OLLAMA_HOST ? 'ollama' : 'extractive');
}
