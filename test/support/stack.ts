/**
 * The whole stack in one test process, over a private nats-server: memo, indexer, agent and the
 * gateway app (driven with `inject`, no socket), the extractor when asked. For tests that need
 * every service but not HTTPS.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { loadAgentConfig, startAgentService, type AgentOverrides, type AgentService } from '@memex/agent';
import { loadExtractorConfig, startExtractorService } from '@memex/extractor';
import { buildGateway, loadGatewayConfig } from '@memex/gateway';
import { RateLimiter } from '@memex/gateway/rateLimit/limiter';
import { loadIndexerConfig, startIndexerService, type IndexerService } from '@memex/indexer';
import { loadMemoConfig, startMemoService, type MemoService } from '@memex/memo';
import { CommandClient, ContentStore, Directory, DirectoryCache, Keyring, Metrics, NatsBlobStore, connectNats } from '@memex/runtime';
import { startNatsServer, tempDir, type NatsServerHandle } from '@memex/testing';

export { REPO_ROOT } from './paths';
import { testStackLogger } from './logs';
import { REPO_ROOT } from './paths';

export interface Stack {
  nats: NatsServerHandle;
  nc: NatsConnection;
  app: FastifyInstance;
  directory: Directory;
  memo: MemoService;
  indexer: IndexerService | undefined;
  env: Record<string, string>;
  agent: AgentService;
  dataDir: string;
  /** A project and its key. */
  project(name?: string): Promise<{ projectId: string; key: string }>;
  stop(): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  agent?: AgentOverrides;
  /** false: no in-process indexer (the test runs its own, e.g. as a process it can kill). */
  indexer?: boolean;
  /** Extra nats-server arguments (e.g. `-c file` for a smaller max_payload). */
  natsArgs?: string[];
  /**
   * Start the extractor too: every durable consumer of the memo events then runs, so the bus lets
   * each message go once all have it (interest retention), as in a whole deployment.
   */
  extractor?: boolean;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const nats = await startNatsServer(options.natsArgs);
  const dir = tempDir('memex-stack-');
  const env = {
    NATS_URL: nats.url,
    MEMEX_DATA_DIR: dir.path,
    MEMEX_MODELS_DIR: join(REPO_ROOT, 'models'),
    LOG_LEVEL: 'silent',
    ...options.env,
  };
  const logger = testStackLogger('stack');
  const memo = await startMemoService(loadMemoConfig(env), { logger });
  const indexer = options.indexer === false ? undefined : await startIndexerService(loadIndexerConfig(env), { logger });
  const agent = await startAgentService(loadAgentConfig(env), { logger, ...options.agent });
  const extractor = options.extractor ? await startExtractorService(loadExtractorConfig(env), { logger }) : undefined;
  const nc = await connectNats({ url: nats.url, name: 'stack-test' });
  const directory = await Directory.open(nc);
  const credentials = await DirectoryCache.start(directory, logger);
  const config = loadGatewayConfig(env);
  const app = await buildGateway(
    {
      config,
      nc,
      jsm: await jetstreamManager(nc),
      commands: new CommandClient(nc),
      content: new ContentStore(await NatsBlobStore.open(nc), await Keyring.open(nc)),
      credentials,
      limiter: new RateLimiter({ limit: config.MEMEX_RATE_LIMIT, windowMs: config.MEMEX_RATE_LIMIT_WINDOW_MS, instance: 'test' }),
      logger,
      metrics: new Metrics(),
      instance: 'test',
    },
    { logger },
  );
  return {
    nats,
    nc,
    app,
    directory,
    memo,
    indexer,
    agent,
    env,
    dataDir: dir.path,
    async project(name = 'test') {
      const { project, apiKey } = await directory.createProject(name);
      // The gateway's key cache follows the KV watch; wait until it knows the new key.
      for (let i = 0; i < 200 && !credentials.authenticate(apiKey); i++) await new Promise((r) => setTimeout(r, 10));
      return { projectId: project.id, key: apiKey };
    },
    async stop() {
      await app.close();
      credentials.stop();
      await nc.close();
      await extractor?.stop();
      await agent.stop();
      await indexer?.stop();
      await memo.stop();
      await nats.stop();
      dir.remove();
    },
  };
}
