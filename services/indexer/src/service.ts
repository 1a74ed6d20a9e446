import { Consumers, QueueGroups, Subjects, searchResponseJson, type IndexSearchRequest } from '@memex/contracts';
import {
  CommandClient,
  EncodedJson,
  IndexStateStore,
  consumeMemoEvents,
  failpoints,
  serveQuery,
  startService,
  type ConsumerRunner,
  type Logger,
  type RunningService,
} from '@memex/runtime';
import type { IndexerConfig } from './config';
import { loadEmbedder } from './embedding/embedder';
import { loadRemoteEmbedder, parseRemoteModel } from './embedding/remote';
import { MemoProcessor } from './processing/processor';
import { EncodedTexts } from './search/encodedTexts';
import { hybridSearch } from './search/hybrid';
import { effectiveCores, readCpuLimits } from './searchIndex/embedded/cpuLimits';
import { ModelSet } from './state/models';
import { Reindexer } from './state/reindex';
import { openSearchIndex } from './searchIndex/open';
import { openReranker } from './reranking/open';
import { traceEmbedder, traceIndex } from './tracing';

export type IndexerService = RunningService;

/**
 * Starts one indexer instance: the catalog and content consumers and re-indexing (role `all` or
 * `ingest`), search queries (role `all` or `search`). Search-only instances keep searches off the
 * event loop that chunks and embeds, and use the cores ingestion leaves.
 */
export async function startIndexerService(config: IndexerConfig, overrides: { logger?: Logger; instance?: string } = {}): Promise<IndexerService> {
  return startService({ service: 'indexer', ...overrides }, config, async ({ instance, logger, metrics, nc, js, keyring, content, retry, onStop, onClose }) => {
    // The CPU this process may use (its cpuset and cgroup quota), which decides the scan thread.
    const cpu = readCpuLimits();
    metrics.gauge('memex_indexer_cpu_cores', 'Cores the indexer counts as its own: those it may run on, capped by its cgroup\'s CPU quota').set(effectiveCores(cpu));
    const index = traceIndex(await openSearchIndex(config, logger, cpu));
    onClose(() => index.close());
    const reranker = await openReranker(config);
    onClose(() => reranker?.dispose());
    const models = new ModelSet(
      (model) => load(model).then(traceEmbedder),
      index,
      logger,
    );
    function load(model: string) {
      const remote = parseRemoteModel(model);
      if (remote) {
        if (!config.EMBEDDING_URL) throw new Error(`EMBEDDING_URL is needed for the remote embedding model ${model}`);
        return loadRemoteEmbedder({
          modelId: model,
          api: remote.api,
          model: remote.name,
          baseUrl: config.EMBEDDING_URL,
          ...(config.EMBEDDING_API_KEY ? { apiKey: config.EMBEDDING_API_KEY } : {}),
          batchSize: config.EMBEDDING_BATCH_SIZE,
          queryPrefix: config.EMBEDDING_QUERY_PREFIX,
          documentPrefix: config.EMBEDDING_DOCUMENT_PREFIX,
          timeoutMs: config.EMBEDDING_TIMEOUT_MS,
        });
      }
      return loadEmbedder({
        model,
        modelsDir: config.MEMEX_MODELS_DIR,
        allowRemote: config.MEMEX_ALLOW_REMOTE_MODELS,
        batchSize: config.EMBEDDING_BATCH_SIZE,
        queryPrefix: config.EMBEDDING_QUERY_PREFIX,
        documentPrefix: config.EMBEDDING_DOCUMENT_PREFIX,
      });
    }
    onClose(() => models.dispose());
    const stateStore = await IndexStateStore.open(nc, config.MEMEX_NATS_REPLICAS);
    // The first instance ever sets the active model; a configured model that differs from the one the
    // index serves starts a re-index to it (the current index serves meanwhile).
    const state = await stateStore.update((current) => {
      if (!current) return { activeModel: config.EMBEDDING_MODEL };
      if (current.activeModel !== config.EMBEDDING_MODEL && !current.reindex) {
        return { ...current, reindex: { model: config.EMBEDDING_MODEL, requestedAt: new Date().toISOString() } };
      }
      return undefined;
    });
    await models.apply(state!);

    const chunking = {
      targetChars: config.CHUNK_TARGET_CHARS,
      maxChars: config.CHUNK_MAX_CHARS,
      overlapChars: config.CHUNK_OVERLAP_CHARS,
    };
    const commands = new CommandClient(nc, 30_000);
    onStop(() => commands.close());
    const processor = new MemoProcessor({ index, models, commands, content, chunking, logger, metrics, failpoint: failpoints(config.MEMEX_FAILPOINTS) });
    // Declared before the state watch below, whose first callback may come at once.
    const ingests = config.INDEXER_ROLE !== 'search';
    const searches = config.INDEXER_ROLE !== 'ingest';
    const reindexer = new Reindexer({
      nc,
      index,
      applyCatalogs: (events) => processor.applyCatalogs(events),
      models,
      store: stateStore,
      chunking,
      content,
      instance,
      logger,
    });
    onStop(() => reindexer.stop());

    // Registered before the state watch, so the watch stops first: no re-index starts while they stop.
    const runners: ConsumerRunner[] = [];
    onStop(() => Promise.all(runners.map((r) => r.stop())));
    const stopWatch = await stateStore.watch((next) => {
      void models
        .apply(next)
        .then(() => (ingests ? reindexer.consider(next) : undefined))
        .catch((error: unknown) => logger.error({ err: error }, 'could not follow the index state'));
    });
    const recheck = setInterval(() => {
      if (ingests) void stateStore.read().then(({ state: s }) => reindexer.consider(s)).catch(() => undefined);
    }, 10_000);
    onStop(() => {
      clearInterval(recheck);
      stopWatch();
    });

    if (ingests) {
      runners.push(
        // Catalog updates are small and many: all that arrived together go in one index write.
        await consumeMemoEvents({
          js,
          consumer: Consumers.indexerCatalog,
          logger: logger.child({ consumer: Consumers.indexerCatalog }),
          concurrency: 1,
          batchSize: 256,
          metrics,
          retry,
          keyring,
          handleBatch: (events) => processor.applyCatalogs(events.map(({ event }) => event)),
        }),
      );
      runners.push(
        await consumeMemoEvents({
          js,
          consumer: Consumers.indexer,
          logger: logger.child({ consumer: Consumers.indexer }),
          concurrency: config.INDEXER_CONCURRENCY,
          batchSize: config.INDEXER_BATCH_SIZE,
          types: ['MemoCreated', 'MemoContentChanged', 'MemoUpdated'],
          metrics,
          retry,
          keyring,
          handleBatch: async (events) => {
            const failed = await processor.indexContents(events.map(({ event, context }) => ({ event, logger: context.logger })));
            for (const { event } of events) await processor.retitle(event);
            return failed.map((error) => (error ? { error } : undefined));
          },
          onDeadLetter: (event, error) => processor.recordFailure(event, error),
        }),
      );
    }

    const searchOptions = {
      lexicalWeight: config.SEARCH_LEXICAL_WEIGHT,
      candidates: config.SEARCH_CANDIDATES,
      ...(reranker ? { reranker } : {}),
      rerankCandidates: config.RERANKER_CANDIDATES,
      titleWeight: config.SEARCH_TITLE_WEIGHT,
    };
    const encodedTexts = new EncodedTexts();
    keyring.onShred(() => encodedTexts.clear());
    const subscriptions = !searches
      ? []
      : [
          serveQuery<IndexSearchRequest, unknown>(nc, {
            subject: Subjects.query.indexSearch,
            queue: QueueGroups.indexer,
            logger,
            metrics,
            handler: async (request) => {
              const reply = await hybridSearch(index, models, request, searchOptions);
              return request.format === 'search-response' ? new EncodedJson(searchResponseJson(reply.hits, encodedTexts.encode)) : reply;
            },
          }),
        ];
    return {
      health: async () => ({
        details: { index: index.kind, role: config.INDEXER_ROLE, model: models.activeName, reindexingTo: models.targetName ?? null, reranker: reranker?.name ?? null },
      }),
      subscriptions,
      ready: { message: 'indexer ready', fields: { index: index.kind, role: config.INDEXER_ROLE, model: models.activeName } },
      exports: {},
    };
  });
}
