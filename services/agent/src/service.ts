import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Consumers } from '@memex/contracts';
import {
  CommandClient,
  ContentStore,
  Keyring,
  openBlobStore,
  connectNats,
  consumeMemoEvents,
  createLogger,
  ensureTopology,
  retryOverrides,
  Metrics,
  serveMetrics,
  instanceId as newInstanceId,
  serveHealth,
  startHealthServer,
  settleEach,
  Slots,
  subscriptionsServed,
  type ConsumerRunner,
  type Logger,
} from '@memex/runtime';
import type { AgentConfig } from './config';
import { Conversations } from './conversation/conversations';
import { serveConversations } from './conversation/handlers';
import { Retriever } from './conversation/retrieval';
import { ModelHealth } from './llm/health';
import type { LlmProvider } from './llm/port';
import { openChatStore, openLlm } from './stores';
import { SummaryProcessor } from './summaries/processor';

export interface AgentService {
  readonly instance: string;
  readonly logger: Logger;
  stop(): Promise<void>;
}

export interface AgentOverrides {
  logger?: Logger;
  instance?: string;
  llm?: LlmProvider;
  clock?: () => Date;
}

/** Starts one agent instance: summaries and tags for new content; chat, generate and chat history. */
export async function startAgentService(config: AgentConfig, overrides: AgentOverrides = {}): Promise<AgentService> {
  const instance = overrides.instance ?? newInstanceId();
  const logger = overrides.logger ?? createLogger({ service: 'agent', instanceId: instance, level: config.LOG_LEVEL });
  const metrics = new Metrics();
  const nc = await connectNats({ url: config.NATS_URL, name: `memex-agent-${instance}`, logger, auth: config, writeDelayMs: config.NATS_WRITE_DELAY_MS, waitForServer: true });
  const jsm = await jetstreamManager(nc);
  await ensureTopology(jsm, { replicas: config.MEMEX_NATS_REPLICAS, retry: retryOverrides(config), logger });
  const js = jetstream(nc);
  const llm = overrides.llm ?? (await openLlm(config));
  const commands = new CommandClient(nc, 30_000);
  const keyring = await Keyring.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, deflate: config.MEMEX_SEAL_DEFLATE });
  const blobs = await openBlobStore(nc, config);
  const modelHealth = new ModelHealth(metrics);
  const summaries = new SummaryProcessor(llm, commands, new ContentStore(blobs, keyring), modelHealth, {
    attempts: config.LLM_SUMMARY_ATTEMPTS,
    backoffMs: config.LLM_SUMMARY_BACKOFF_MS,
    timeoutMs: config.LLM_TIMEOUT_MS,
  });
  const store = await openChatStore(config);
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
  const runners: ConsumerRunner[] = [
    await consumeMemoEvents({
      js,
      consumer: Consumers.agent,
      logger: logger.child({ consumer: Consumers.agent }),
      concurrency: 2,
      batchSize: 32,
      lingerMs: 20,
      // Only a new content revision is summarized; other events are acknowledged unopened.
      types: ['MemoCreated', 'MemoContentChanged'],
      metrics,
      retry: retryOverrides(config),
      keyring,
      // Each event succeeds or fails alone: a failed summary is retried without redoing the others.
      handleBatch: (events) => settleEach(events, ({ event, context }) => summaries.handle(event, context.logger), summarizing),
      onDeadLetter: (event, error) => summaries.recordFailure(event, error),
    }),
  ];
  const check = async () => {
    const r = await llm.readiness();
    return { ready: r.ready && !nc.isClosed(), details: { llm: llm.name, chats: store.chats.kind, ...r.details, llm_last_error: modelHealth.lastError } };
  };
  const conversationServer = serveConversations(nc, conversations, logger, metrics);
  const subs = [
    ...conversationServer.subscriptions,
    serveMetrics(nc, 'agent', instance, metrics),
    serveHealth(nc, 'agent', instance, check),
  ];
  await subscriptionsServed(nc);
  const healthServer = config.MEMEX_HEALTH_PORT ? await startHealthServer(config.MEMEX_HEALTH_PORT, 'agent', instance, check) : undefined;
  logger.info({ llm: llm.name }, 'agent ready');

  return {
    instance,
    logger,
    async stop() {
      healthServer?.close();
      for (const sub of subs) sub.unsubscribe();
      await conversationServer.interrupt();
      await Promise.all(runners.map((r) => r.stop()));
      commands.close();
      keyring.close();
      await blobs.close();
      await nc.drain().catch(() => undefined);
      await store.close();
    },
  };
}
