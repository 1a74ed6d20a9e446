import { Consumers } from '@memex/contracts';
import { CommandClient, consumeMemoEvents, Slots, startService, type Logger, type RunningService } from '@memex/runtime';
import type { AgentConfig } from './config';
import { Conversations } from './conversation/conversations';
import { serveConversations } from './conversation/handlers';
import { Retriever } from './conversation/retrieval';
import { ModelHealth } from './llm/health';
import type { LlmProvider } from './llm/port';
import { llmModel, openChatStore, openLlm } from './stores';
import { traceLlm } from './tracing';
import { SummaryProcessor } from './summaries/processor';
import { Resummarizer } from './summaries/resummarize';

export type AgentService = RunningService;

export interface AgentOverrides {
  logger?: Logger;
  instance?: string;
  llm?: LlmProvider;
  clock?: () => Date;
}

/** Starts one agent instance: summaries and tags for new content; chat, generate and chat history. */
export async function startAgentService(config: AgentConfig, overrides: AgentOverrides = {}): Promise<AgentService> {
  const identity = { service: 'agent' as const, logger: overrides.logger, instance: overrides.instance };
  return startService(identity, config, async ({ logger, metrics, nc, js, content, retry, keyring, onStop, onClose }) => {
    const llm = traceLlm(overrides.llm ?? (await openLlm(config)), llmModel(config));
    const commands = new CommandClient(nc, 30_000);
    onStop(() => commands.close());
    const modelHealth = new ModelHealth(metrics);
    const summaries = new SummaryProcessor(llm, commands, content, modelHealth, {
      attempts: config.LLM_SUMMARY_ATTEMPTS,
      backoffMs: config.LLM_SUMMARY_BACKOFF_MS,
      timeoutMs: config.LLM_TIMEOUT_MS,
    });
    const store = await openChatStore(config);
    onClose(() => store.close());
    const conversations = new Conversations({
      llm,
      chats: store.chats,
      retriever: new Retriever(nc, { topK: config.AGENT_TOP_K, maxDistance: config.AGENT_MAX_DISTANCE }),
      clock: overrides.clock ?? (() => new Date()),
      logger,
      limits: { maxTokens: config.LLM_MAX_TOKENS, timeoutMs: config.LLM_TIMEOUT_MS },
      onModelError: (operation, error) => modelHealth.failed(operation, error),
    });

    // AGENT_CONCURRENCY memos are summarized at once, whichever batch they came in.
    const summarizing = new Slots(config.AGENT_CONCURRENCY);
    const runner = await consumeMemoEvents({
      js,
      consumer: Consumers.agent,
      logger: logger.child({ consumer: Consumers.agent }),
      concurrency: 2,
      batchSize: 32,
      lingerMs: 20,
      // Only a new content revision is summarized; other events are acknowledged unopened.
      types: ['MemoCreated', 'MemoContentChanged'],
      metrics,
      retry,
      keyring,
      // Summaries recorded in one command per batch; each event still succeeds or fails alone, so a
      // failed summary is retried without redoing the others.
      handleBatch: (events) => summaries.handleBatch(events.map(({ event, context }) => ({ event, logger: context.logger })), summarizing),
      onDeadLetter: (event, error) => summaries.recordFailure(event, error),
    });
    onStop(() => runner.stop());
    const resummarizer = new Resummarizer({ nc, js, content, commands, summaries, health: modelHealth, slots: summarizing, concurrency: config.AGENT_CONCURRENCY, logger, metrics, retry });
    const resummaries = await resummarizer.serve();
    onStop(() => resummaries.runner.stop());
    const conversationServer = serveConversations(nc, conversations, logger, metrics);
    // Answers being streamed end before the consumers and connections behind them stop.
    onStop(() => conversationServer.interrupt());
    return {
      health: async () => {
        const r = await llm.readiness();
        return { ready: r.ready, details: { llm: llm.name, chats: store.chats.kind, ...r.details, llm_last_error: modelHealth.lastError } };
      },
      subscriptions: [...conversationServer.subscriptions, ...resummaries.subscriptions],
      ready: { message: 'agent ready', fields: { llm: llm.name } },
      exports: {},
    };
  });
}
