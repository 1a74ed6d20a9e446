import { QueueGroups, Subjects, type MemoAddressRequest, type MemoGetRequest, type MemoListRequest, type MemoLogRequest, type TitleSearchReply, type TitleSearchRequest } from '@memex/contracts';
import {
  failpoints,
  payloadBudget,
  serveMemoCommands,
  serveQuery,
  startService,
  type Logger,
} from '@memex/runtime';
import type { MemoConfig } from './config';
import { ExpirySweeper } from './expiry/sweeper';
import { startEventsOut } from './feed/start';
import { memoWriteForms } from './formats';
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
  const clock = overrides.clock ?? (() => new Date());
  const identity = { service: 'memo' as const, logger: overrides.logger, instance: overrides.instance };
  return startService(identity, config, async ({ logger, metrics, nc, jsm, js, keyring, content, retry, onStop, onClose }) => {
    const forms = memoWriteForms(config);
    const stores = await openMemoStores(config);
    onClose(() => stores.close());
    const { readModel } = stores;
    const store = new SealedEventStore(stores.store, keyring, {
      attributesAfterEach,
      rowData,
      olderRows: !forms.leanSealedRows,
    });
    // The publisher calls `project` only from sweeps and publishes, which start after `commands` exists.
    const publisher: OutboxPublisher = new OutboxPublisher({
      nc,
      jsm,
      store,
      logger,
      metrics,
      compact: forms.rawBusEvents,
      project: (stream) => commands.project(stream),
      erased: async (projectId, memoId) => {
        await keyring.shred(projectId, memoId);
        await stores.afterErase();
      },
    });
    const references = new ReferenceClaims(store, readModel, clock);
    const failpoint = failpoints(config.MEMEX_FAILPOINTS);
    const commands = new MemoCommandService({ store, readModel, publisher, references, keyring, content, clock, logger, failpoint, compact: forms.compactEvents });

    // Whatever a previous run appended but did not publish goes out before new work comes in.
    const republished = await publisher.sweep();
    if (republished > 0) logger.warn({ republished }, 'outbox republished events left by a previous run');
    publisher.start();
    onStop(() => publisher.stop());

    const sweeper = new ExpirySweeper(readModel, commands, clock, logger);
    onStop(() => sweeper.stop());
    const handlers = commands.handlers();
    const withPoke = {
      ...handlers,
      create: async (...args: Parameters<typeof handlers.create>) => {
        const out = await handlers.create(...args);
        // The input is sealed; a poke is cheap (it re-reads the next expiration date).
        sweeper.poke();
        return out;
      },
      'create-batch': async (...args: Parameters<(typeof handlers)['create-batch']>) => {
        const out = await handlers['create-batch'](...args);
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
    const consumer = await serveMemoCommands({
      nc,
      js,
      logger,
      handlers: withPoke,
      concurrency: config.MEMO_COMMAND_CONCURRENCY,
      metrics,
      retry,
    });
    onStop(() => consumer.stop());
    const eventsOut = await startEventsOut({ nc, js, jsm, keyring, commands, config: config.feed, replicas: config.MEMEX_NATS_REPLICAS, logger, metrics, retry, clock });
    onStop(() => eventsOut.stop());
    const subscriptions = [
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
    ];
    return {
      health: async () => ({ details: { store: store.kind } }),
      subscriptions,
      // Expiry sweeps start once the queries and health answer, as the last thing before ready.
      served: () => sweeper.start(),
      ready: { message: 'memo service ready', fields: { store: store.kind } },
      exports: { commands },
    };
  });
}
