import { join } from 'node:path';
import { connectMongo } from '@memex/runtime';
import { llmProviderName, type AgentConfig } from './config';
import type { ChatStore } from './chats/port';
import { SqliteChatStore } from './chats/sqlite';
import type { LlmProvider } from './llm/port';
import { ExtractiveProvider } from './llm/extractive';

/** MongoDB when MONGODB_URL is set; otherwise a SQLite file in the data directory. */
export async function openChatStore(config: AgentConfig): Promise<{ chats: ChatStore; close(): Promise<void> }> {
  if (config.MONGODB_URL) {
    const { MongoChatStore } = await import('./chats/mongodb');
    const client = await connectMongo(config.MONGODB_URL);
    const chats = new MongoChatStore(client.db(config.MONGODB_DB));
    await chats.ready();
    return { chats, close: () => client.close() };
  }
  const chats = new SqliteChatStore(join(config.MEMEX_DATA_DIR, 'agent', 'agent.db'));
  return { chats, close: () => chats.close() };
}

/** The model the configured provider runs, when the configuration names one (span attributes). */
export function llmModel(config: AgentConfig): string | undefined {
  const provider = llmProviderName(config);
  if (provider === 'openai') return config.OPENAI_MODEL || undefined;
  if (provider === 'ollama') return config.OLLAMA_MODEL;
  return undefined;
}

/** LLM_PROVIDER decides; unset, Ollama when OLLAMA_HOST is set, otherwise the built-in extractive provider. */
export async function openLlm(config: AgentConfig): Promise<LlmProvider> {
  const provider = llmProviderName(config);
  if (provider === 'extractive') return new ExtractiveProvider();
  if (provider === 'openai') {
    const { OpenAiProvider } = await import('./llm/openai');
    return new OpenAiProvider({
      baseUrl: config.OPENAI_BASE_URL!,
      ...(config.OPENAI_API_KEY ? { apiKey: config.OPENAI_API_KEY } : {}),
      ...(config.OPENAI_MODEL ? { model: config.OPENAI_MODEL } : {}),
      timeoutMs: config.OPENAI_TIMEOUT_MS,
      maxRetries: config.OPENAI_MAX_RETRIES,
      tools: config.OPENAI_TOOLS,
      maxToolCalls: config.OPENAI_MAX_TOOL_CALLS,
      maxTokens: config.LLM_MAX_TOKENS,
    });
  }
  const { OllamaProvider } = await import('./llm/ollama');
  return new OllamaProvider({
    host: config.OLLAMA_HOST!,
    model: config.OLLAMA_MODEL,
    numCtx: config.OLLAMA_NUM_CTX,
    timeoutMs: config.OLLAMA_TIMEOUT_MS,
    maxToolCalls: config.OLLAMA_MAX_TOOL_CALLS,
    maxTokens: config.LLM_MAX_TOKENS,
  });
}
