import type { MemoEvent, MemoEventMessage } from '@memex/contracts';
import { BlobIntegrityError, isKeyErased, verifyBlob, type CommandClient, type ContentStore, type Logger, type Metrics } from '@memex/runtime';
import { ExtractionError } from './extract/errors';
import type { Extracted } from './extract/extract';
import type { SandboxLimits } from './sandbox/sandbox';

type Created = Extract<MemoEvent, { type: 'MemoCreated' }>['data'];
type Deleted = Extract<MemoEvent, { type: 'MemoDeleted' }>['data'];

interface ExtractionDeps {
  /** The blob store and keyring (originals are read from it, extracted text written to it). */
  content: ContentStore;
  commands: CommandClient;
  limits: SandboxLimits;
  /** Runs one extraction (the sandbox pool in production). */
  extract: (bytes: Uint8Array, format: Extracted['format']) => Promise<Extracted>;
  logger: Logger;
  metrics?: Metrics;
}

/**
 * What the extractor does with memo events: an upload's `MemoCreated` → read the sealed original,
 * extract it in the sandbox, record the text (or the reason it failed) through the memo service;
 * `MemoDeleted` → delete the original. Idempotent: the memo service drops a repeated extraction.
 */
export class ExtractionProcessor {
  constructor(private readonly deps: ExtractionDeps) {}

  async handle(event: MemoEventMessage, logger: Logger = this.deps.logger): Promise<void> {
    if (event.type === 'MemoCreated' && (event.data as Created).file) await this.extract(event.data as Created, logger);
    else if (event.type === 'MemoDeleted' && (event.data as Deleted).file) await this.deps.content.blobs.delete((event.data as Deleted).file!);
  }

  private async extract(data: Created, logger: Logger): Promise<void> {
    const { content, commands, limits, metrics } = this.deps;
    const { blobs, keyring } = content;
    const file = data.file!;
    const { projectId, memoId, revision } = data;
    const requestId = (logger.bindings() as { requestId?: string }).requestId;
    const options = requestId ? { requestId } : {};
    const fail = async (message: string, outcome: string) => {
      metrics?.counter('memex_extractions_total', 'Documents extracted, by format and outcome').inc({ format: file.format, outcome });
      logger.warn({ memoId, format: file.format, reason: message }, 'extraction failed');
      await commands.send('record-processing-failure', { projectId, memoId, revision, stage: 'extracting', message: message.slice(0, 500) }, options);
    };

    const sealed = await blobs.get(file.blob.name);
    if (!sealed) {
      // Deleted meanwhile (its key is gone too), or lost: only the latter is worth a status.
      if (!(await keyring.has(projectId, memoId))) return;
      return fail('the original file is missing from the blob store', 'missing');
    }
    let bytes: Uint8Array;
    try {
      bytes = await keyring.open(projectId, memoId, verifyBlob(file.blob, sealed));
    } catch (error) {
      if (isKeyErased(error)) return;
      if (error instanceof BlobIntegrityError) return fail('the stored file does not match its reference', 'integrity');
      throw error;
    }

    const started = performance.now();
    let extracted: Extracted;
    try {
      extracted = await this.deps.extract(bytes, file.format);
    } catch (error) {
      if (error instanceof ExtractionError) return fail(error.message, error.failure);
      throw error;
    }
    const seconds = (performance.now() - started) / 1000;
    metrics?.histogram('memex_extraction_seconds', 'Time to extract one document').observe(seconds, { format: file.format });
    if (Buffer.byteLength(extracted.text) > limits.maxTextBytes) {
      return fail(`the extracted text is larger than the content limit of ${limits.maxTextBytes} bytes`, 'too_large');
    }
    metrics?.counter('memex_extractions_total', 'Documents extracted, by format and outcome').inc({ format: file.format, outcome: 'ok' });
    logger.debug({ memoId, format: file.format, pages: extracted.pages, chars: extracted.text.length, seconds }, 'extracted');
    // Claim-check: the text goes to the blob store sealed with the memo's key; the command carries the reference.
    let ref;
    try {
      ref = await content.write(projectId, memoId, extracted.text);
    } catch (error) {
      if (isKeyErased(error)) return;
      throw error;
    }
    const { result } = await commands.send(
      'record-extraction',
      { projectId, memoId, blob: file.blob.name, content: ref, format: file.format, pages: extracted.pages },
      options,
    ).catch(async (error: unknown) => {
      await content.remove(ref);
      throw error;
    });
    // Unchanged text (a replay) or a memo that moved on: this copy is not referenced.
    if (!result.applied) await content.remove(ref);
  }

  /** An upload whose extraction failed every retry (outages): the memo shows it instead of staying pending. */
  async recordFailure(event: MemoEventMessage, error: unknown): Promise<void> {
    if (event.type !== 'MemoCreated' || !(event.data as Created).file) return;
    const { projectId, memoId, revision } = event.data as Created;
    await this.deps.commands.send('record-processing-failure', {
      projectId,
      memoId,
      revision,
      stage: 'extracting',
      message: String((error as Error)?.message ?? error).slice(0, 500),
    });
  }
}
