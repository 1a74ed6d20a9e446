import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Consumers } from '@memex/contracts';
import {
  CommandClient,
  ContentStore,
  Keyring,
  Metrics,
  openBlobStore,
  connectNats,
  consumeMemoEvents,
  createLogger,
  ensureTopology,
  retryOverrides,
  instanceId as newInstanceId,
  serveHealth,
  serveMetrics,
  settleEach,
  Slots,
  startHealthServer,
  subscriptionsServed,
  type Logger,
} from '@memex/runtime';
import type { ExtractorConfig } from './config';
import { ExtractionProcessor } from './processing';
import { SandboxPool, type SandboxLimits } from './sandbox/sandbox';

export interface ExtractorService {
  readonly instance: string;
  readonly logger: Logger;
  stop(): Promise<void>;
}

export function sandboxLimits(config: ExtractorConfig): SandboxLimits {
  return {
    timeoutMs: config.EXTRACT_TIMEOUT_MS,
    maxMemoryMb: config.EXTRACT_MAX_MEMORY_MB,
    maxInflatedBytes: config.EXTRACT_MAX_INFLATED_MB * 1024 * 1024,
    maxPages: config.EXTRACT_MAX_PAGES,
    maxCells: config.EXTRACT_MAX_CELLS,
    maxDepth: config.EXTRACT_MAX_DEPTH,
    maxTextBytes: config.EXTRACT_MAX_TEXT_BYTES,
  };
}

/**
 * Starts one extractor instance: a durable consumer of memo events that turns uploaded files into
 * content revisions. Instances share the consumer, so running N of them extracts N× as much.
 */
export async function startExtractorService(config: ExtractorConfig, overrides: { logger?: Logger; instance?: string } = {}): Promise<ExtractorService> {
  const instance = overrides.instance ?? newInstanceId();
  const logger = overrides.logger ?? createLogger({ service: 'extractor', instanceId: instance, level: config.LOG_LEVEL });
  const metrics = new Metrics();
  const nc = await connectNats({ url: config.NATS_URL, name: `memex-extractor-${instance}`, logger, auth: config, writeDelayMs: config.NATS_WRITE_DELAY_MS, waitForServer: true });
  const jsm = await jetstreamManager(nc);
  await ensureTopology(jsm, { replicas: config.MEMEX_NATS_REPLICAS, retry: retryOverrides(config), logger });
  const js = jetstream(nc);
  const blobs = await openBlobStore(nc, config);
  const keyring = await Keyring.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, deflate: config.MEMEX_SEAL_DEFLATE });
  const commands = new CommandClient(nc, 30_000);
  // Children start with the first document and end after EXTRACT_IDLE_MS without one: an idle
  // extractor holds no parser memory (two warm children are ~470 MB).
  const pool = new SandboxPool(sandboxLimits(config), { size: config.EXTRACT_CONCURRENCY, idleTimeoutMs: config.EXTRACT_IDLE_MS });
  const processor = new ExtractionProcessor({
    content: new ContentStore(blobs, keyring),
    commands,
    limits: sandboxLimits(config),
    extract: (bytes, format) => pool.extract(bytes, format),
    logger,
    metrics,
  });
  const extracting = new Slots(config.EXTRACT_CONCURRENCY);
  const runner = await consumeMemoEvents({
    js,
    consumer: Consumers.extractor,
    logger: logger.child({ consumer: Consumers.extractor }),
    // Batches of events; the documents among them are extracted EXTRACT_CONCURRENCY at a time.
    concurrency: 2,
    batchSize: 32,
    // Nearly every event is one to skip: gathering them costs an upload 50 ms and saves a write each.
    lingerMs: 50,
    // Uploads arrive as MemoCreated, erasures as MemoDeleted; other events are acknowledged unopened.
    types: ['MemoCreated', 'MemoDeleted'],
    metrics,
    retry: retryOverrides(config),
    keyring,
    handleBatch: (events) => settleEach(events, ({ event, context }) => processor.handle(event, context.logger), extracting),
    onDeadLetter: (event, error) => processor.recordFailure(event, error),
  });
  const check = async () => ({ ready: !nc.isClosed(), details: { blobs: blobs.kind, concurrency: config.EXTRACT_CONCURRENCY } });
  const subs = [serveMetrics(nc, 'extractor', instance, metrics), serveHealth(nc, 'extractor', instance, check)];
  await subscriptionsServed(nc);
  const healthServer = config.MEMEX_HEALTH_PORT ? await startHealthServer(config.MEMEX_HEALTH_PORT, 'extractor', instance, check) : undefined;
  logger.info({ concurrency: config.EXTRACT_CONCURRENCY }, 'extractor ready');

  return {
    instance,
    logger,
    async stop() {
      healthServer?.close();
      for (const sub of subs) sub.unsubscribe();
      await runner.stop();
      await pool.close();
      commands.close();
      keyring.close();
      await blobs.close();
      await nc.drain().catch(() => undefined);
    },
  };
}
