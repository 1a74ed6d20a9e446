import { Consumers } from '@memex/contracts';
import { CommandClient, consumeMemoEvents, inSpan, settleEach, Slots, startService, type Logger, type RunningService } from '@memex/runtime';
import type { ExtractorConfig } from './config';
import { ExtractionProcessor } from './processing';
import { SandboxPool, type SandboxLimits } from './sandbox/sandbox';

export type ExtractorService = RunningService;

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
  return startService({ service: 'extractor', ...overrides }, config, async ({ logger, metrics, nc, js, blobs, content, retry, keyring, onStop }) => {
    const commands = new CommandClient(nc, 30_000);
    onStop(() => commands.close());
    // Children start with the first document and end after EXTRACT_IDLE_MS without one: an idle
    // extractor holds no parser memory.
    const pool = new SandboxPool(sandboxLimits(config), { size: config.EXTRACT_CONCURRENCY, idleTimeoutMs: config.EXTRACT_IDLE_MS });
    onStop(() => pool.close());
    const processor = new ExtractionProcessor({
      content,
      commands,
      limits: sandboxLimits(config),
      extract: (bytes, format) =>
        inSpan('extract', { attributes: { 'memex.extract.format': format, 'memex.extract.bytes': bytes.byteLength } }, () => pool.extract(bytes, format)),
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
      retry,
      keyring,
      handleBatch: (events) => settleEach(events, ({ event, context }) => processor.handle(event, context.logger), extracting),
      onDeadLetter: (event, error) => processor.recordFailure(event, error),
    });
    onStop(() => runner.stop());
    return {
      health: async () => ({ details: { blobs: blobs.kind, concurrency: config.EXTRACT_CONCURRENCY } }),
      ready: { message: 'extractor ready', fields: { concurrency: config.EXTRACT_CONCURRENCY } },
      exports: {},
    };
  });
}
