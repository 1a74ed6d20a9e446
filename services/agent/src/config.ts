import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, HealthPortEnv, loadEnv } from '@memex/runtime';

export const AgentEnv = Type.Object({
  ...CommonEnv,
  ...HealthPortEnv,
  MONGODB_URL: Type.Optional(Type.String({ description: 'Set to keep chats in MongoDB' })),
  MONGODB_DB: Type.String({ default: 'memex' }),
  OLLAMA_HOST: Type.Optional(Type.String({ description: 'Set to answer with Ollama instead of the built-in extractive provider' })),
  OLLAMA_MODEL: Type.String({ default: 'llama3.1:8b', description: 'Ollama model (must support tool calling)' }),
  OLLAMA_NUM_CTX: Type.Integer({ minimum: 512, default: 8192, description: 'Context window passed to Ollama' }),
  OLLAMA_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120_000, description: 'Longest one Ollama call may take' }),
  OLLAMA_MAX_TOOL_CALLS: Type.Integer({ minimum: 0, default: 4, description: 'Searches the model may run per answer' }),
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
  return loadEnv(AgentEnv, env);
}
