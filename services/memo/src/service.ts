import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { QueueGroups, Subjects, type MemoAddressRequest, type MemoGetRequest, type MemoListRequest, type MemoLogRequest, type TitleSearchReply, type TitleSearchRequest } from '@memex/contracts';
import {
  connectNats,
  ContentStore,
  createLogger,
  Keyring,
  openBlobStore,
  payloadBudget,
  ensureTopology,
  retryOverrides,
  failpoints,
  instanceId as newInstanceId,
  Metrics,
  serveHealth,
  serveMemoCommands,
  serveMetrics,
  serveQuery,
  startHealthServer,
  subscriptionsServed,
  type ConsumerRunner,
  type Logger,
} from '@memex/runtime';
import type { MemoConfig } from './config';
import { ExpirySweeper } from './expiry/sweeper';
import { startEventsOut } from './feed/start';
import { listMemos, memoFile, memoHistory, memoStatus } from './memo/catalog';
import { MemoCommandService } from './memo/handlers';
import { getMemo, resolveMemo, searchTitles } from './memo/queries';
import { SealedEventStore } from './eventStore/sealed';
import { ReferenceClaims } from './memo/references';
import { rowData } from './memo/rows';
import { attributesAfterEach } from './memo/view';
import { readLogPage } from './outbox/log';
import { OutboxPublisher } from './outbox/publisher';
import { openMemoStores } from './stores';

export interface MemoService {
  readonly instance: string;
  readonly logger: Logger;
  readonly commands: MemoCommandService;
  stop(): Promise<void>;
}

export interface MemoServiceOverrides {
  logger?: Logger;
  clock?: () => Date;
  instance?: string;
}

/** Starts one memo service instance: stores, outbox, command consumer, queries, expiry, health. */
export async function startMemoService(config: MemoConfig, overrides: MemoServiceOverrides = {}): Promise<MemoService> {
  const instance = overrides.instance ?? newInstanceId();
  const logger = overrides.logger ?? createLogger({ service: 'memo', instanceId: instance, level: config.LOG_LEVEL });
  const clock = overrides.clock ?? (() => new Date());

  const metrics = new Metrics();
  const nc: NatsConnection = await connectNats({ url: config.NATS_URL, name: `memex-memo-${instance}`, logger, auth: config, writeDelayMs: config.NATS_WRITE_DELAY_MS, waitForServer: true });
  const jsm = await jetstreamManager(nc);
  await ensureTopology(jsm, { replicas: config.MEMEX_NATS_REPLICAS, retry: retryOverrides(config), logger });
  const js = jetstream(nc);

  const stores = await openMemoStores(config);
  const keyring = await Keyring.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, deflate: config.MEMEX_SEAL_DEFLATE });
  const blobs = await openBlobStore(nc, config);
  const content = new ContentStore(blobs, keyring);
  const { readModel } = stores;
  const store = new SealedEventStore(stores.store, keyring, {
    attributesAfterEach,
    rowData,
    olderRows: !config.MEMEX_SEAL_DEFLATE,
  });
  // The publisher calls `project` only from sweeps and publishes, which start after `commands` exists.
  const publisher: OutboxPublisher = new OutboxPublisher({
    nc,
    jsm,
    store,
    logger,
    metrics,
    compact: config.MEMEX_SEAL_DEFLATE,
    project: (stream) => commands.project(stream),
    erased: async (projectId, memoId) => {
      await keyring.shred(projectId, memoId);
      await stores.afterErase();
    },
  });
  const references = new ReferenceClaims(store, readModel, clock);
  const failpoint = failpoints(config.MEMEX_FAILPOINTS);
  const commands = new MemoCommandService({ store, readModel, publisher, references, keyring, content, clock, logger, failpoint, compact: config.MEMEX_SEAL_DEFLATE });

  // Whatever a previous run appended but did not publish goes out before new work comes in.
  const republished = await publisher.sweep();
  if (republished > 0) logger.warn({ republished }, 'outbox republished events left by a previous run');
  publisher.start();

  const sweeper = new ExpirySweeper(readModel, commands, clock, logger);
  const handlers = commands.handlers();
  const withPoke = {
    ...handlers,
    create: async (...args: Parameters<typeof handlers.create>) => {
      const out = await handlers.create(...args);
      // The input is sealed; a poke is cheap (it re-reads the next expiration date).
      sweeper.poke();
      return out;
    },
    update: async (...args: Parameters<typeof handlers.update>) => {
      const out = await handlers.update(...args);
      // The input is sealed; a poke is cheap (it re-reads the next expiration date).
      sweeper.poke();
      return out;
    },
  };
  const consumer: ConsumerRunner = await serveMemoCommands({
    nc,
    js,
    logger,
    handlers: withPoke,
    concurrency: config.MEMO_COMMAND_CONCURRENCY,
    metrics,
    retry: retryOverrides(config),
  });
  const eventsOut = await startEventsOut({ nc, js, jsm, keyring, commands, config: config.feed, replicas: config.MEMEX_NATS_REPLICAS, logger, metrics, retry: retryOverrides(config), clock });
  const check = async () => ({ ready: !nc.isClosed(), details: { store: store.kind } });
  const subs = [
    serveQuery<MemoGetRequest, unknown>(nc, {
      subject: Subjects.query.memoGet,
      queue: QueueGroups.memo,
      logger,
      metrics,
      handler: (req) => getMemo(commands, req),
    }),
    serveQuery<MemoGetRequest, unknown>(nc, {
      subject: Subjects.query.memoResolve,
      queue: QueueGroups.memo,
      logger,
      metrics,
      handler: (req) => resolveMemo(commands, req),
    }),
    serveQuery<TitleSearchRequest, TitleSearchReply>(nc, {
      subject: Subjects.query.memoTitleSearch,
      queue: QueueGroups.memo,
      logger,
      metrics,
      handler: (req) => searchTitles(commands, readModel, content, req),
    }),
    serveQuery<MemoListRequest, unknown>(nc, {
      subject: Subjects.query.memoList,
      queue: QueueGroups.memo,
      logger,
      metrics,
      handler: (req) => listMemos(readModel, req),
    }),
    serveQuery<MemoLogRequest, unknown>(nc, {
      subject: Subjects.query.memoLog,
      queue: QueueGroups.memo,
      logger,
      metrics,
      handler: (req) => readLogPage(store, req, payloadBudget(nc) - 1024),
    }),
    ...(
      [
        [Subjects.query.memoStatus, memoStatus],
        [Subjects.query.memoHistory, memoHistory],
        [Subjects.query.memoFile, memoFile],
      ] as const
    ).map(([subject, answer]) =>
      serveQuery<MemoAddressRequest, unknown>(nc, { subject, queue: QueueGroups.memo, logger, metrics, handler: (req) => answer(commands, req) }),
    ),
    serveMetrics(nc, 'memo', instance, metrics),
    serveHealth(nc, 'memo', instance, check),
  ];
  await subscriptionsServed(nc);
  const healthServer = config.MEMEX_HEALTH_PORT ? await startHealthServer(config.MEMEX_HEALTH_PORT, 'memo', instance, check) : undefined;
  sweeper.start();
  logger.info({ store: store.kind }, 'memo service ready');

  return {
    instance,
    logger,
    commands,
    async stop() {
      healthServer?.close();
      for (const sub of subs) sub.unsubscribe();
      await eventsOut.stop();
      await consumer.stop();
      await sweeper.stop();
      await publisher.stop();
      keyring.close();
      await blobs.close();
      await nc.drain().catch(() => undefined);
      await stores.close();
    },
  };
}
