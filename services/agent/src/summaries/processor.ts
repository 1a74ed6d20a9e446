import {
  MemexError,
  startsContentRevision,
  type ContentRef,
  type MemoCommandPayload,
  type MemoEventMessage,
  type SummaryResult,
  type SummarySource,
} from '@memex/contracts';
import { SEAL_FOR_TRANSIT, isKeyErased, type BatchResults, type CommandClient, type ContentStore, type Logger, type Slots } from '@memex/runtime';
import { describeModelError, isModelFailure, isTransient } from '../llm/errors';
import { extractiveSummary } from '../llm/extractive';
import { ModelHealth } from '../llm/health';
import type { LlmProvider } from '../llm/port';
import { summaryRetryDelayMs } from './backoff';
import { generatedTags } from './tags';

export interface SummaryPolicy {
  /** Model calls per summary before the extractive fallback (transient failures only; a format failure falls back at once). */
  attempts: number;
  /** Wait before the second attempt; doubles for each one after (a server's `Retry-After` instead, see summaryRetryDelayMs). */
  backoffMs: number;
  /** Longest one attempt may take, the provider's own retries included (LLM_TIMEOUT_MS). */
  timeoutMs: number;
}

const DEFAULT_POLICY: SummaryPolicy = { attempts: 3, backoffMs: 1_000, timeoutMs: 120_000 };

/**
 * Summaries and tags read at most this many characters of a revision (its beginning), so a 16 MiB
 * memo is summarized in about the time of a 256 KiB one.
 */
const SUMMARY_INPUT_CHARS = 256 * 1024;

/**
 * Summaries and tags for every new content revision, recorded through the memo service, which drops
 * them if the memo has moved to a newer revision meanwhile. A model's failure never fails the memo:
 * after `policy.attempts` (or at once for a reply with nothing usable) the extractive summary and
 * tags are recorded as `extractive-fallback`, with the reason. A fault in our own code (an error
 * no adapter raised) still fails the event, so it is retried and dead-lettered, never hidden.
 */
export class SummaryProcessor {
  constructor(
    private readonly llm: LlmProvider,
    private readonly commands: CommandClient,
    private readonly content: ContentStore,
    private readonly health: ModelHealth = new ModelHealth(),
    private readonly policy: SummaryPolicy = DEFAULT_POLICY,
  ) {}

  /** The model's summary, or the extractive one with the reason the model's could not be had. */
  async summarize(content: string, logger?: Logger): Promise<SummaryResult> {
    const input = content.length > SUMMARY_INPUT_CHARS ? content.slice(0, SUMMARY_INPUT_CHARS) : content;
    let reason = '';
    for (let attempt = 1; attempt <= this.policy.attempts; attempt++) {
      try {
        const reply = await this.llm.summarize(input, AbortSignal.timeout(this.policy.timeoutMs));
        const tags = reply.tags.length > 0 ? reply.tags : extractiveSummary(input).tags;
        return { summary: reply.summary, tags, source: reply.source };
      } catch (error) {
        if (isKeyErased(error)) throw error;
        const kind = this.health.failed('summarize', error);
        if (!isModelFailure(kind)) throw error;
        reason = `${kind}: ${describeModelError(error)}`.slice(0, 500);
        logger?.warn({ attempt, kind, err: error }, 'model summary failed');
        if (!isTransient(kind) || attempt === this.policy.attempts) break;
        await new Promise((resolve) => setTimeout(resolve, summaryRetryDelayMs(error, attempt, this.policy)));
      }
    }
    return { ...extractiveSummary(input), source: 'extractive-fallback', reason };
  }

  async handle(event: MemoEventMessage, logger?: Logger): Promise<void> {
    const [outcome] = await this.handleBatch([{ event, ...(logger ? { logger } : {}) }]);
    if (outcome) throw outcome.error;
  }

  /**
   * Summaries and tags of the new content revisions among `events` (at most `slots` model calls at
   * once), recorded in one `record-summary-batch`. Per event, in order: `undefined` when done (or
   * nothing to do), `{ error }` when it failed alone (then it alone is retried).
   */
  async handleBatch(events: readonly { event: MemoEventMessage; logger?: Logger }[], slots?: Slots): Promise<BatchResults> {
    const outcomes: ({ error: unknown } | undefined)[] = events.map(() => undefined);
    const prepared = await Promise.all(
      events.map(async ({ event, logger }, at) => {
        try {
          const item = await (slots ? slots.run(() => this.prepare(event, logger)) : this.prepare(event, logger));
          return item && { ...item, at, logger };
        } catch (error) {
          outcomes[at] = { error };
          return undefined;
        }
      }),
    );
    const items = prepared.flatMap((p) => (p ? [p] : []));
    const requestId = items.map(({ logger }) => (logger?.bindings() as { requestId?: string } | undefined)?.requestId).find(Boolean);
    const results = await this.commands.sendBatch(
      'record-summary-batch',
      items.map(({ item }) => item),
      requestId ? { requestId } : {},
    );
    results.forEach((result, k) => {
      const { at, source } = items[k]!;
      if (result.ok) this.health.summarized(source);
      // The memo was erased meanwhile: nothing left to record.
      else if (result.error.code !== 'MemoNotFound') outcomes[at] = { error: MemexError.fromWire(result.error) };
    });
    return outcomes;
  }

  /** The sealed `record-summary` of a new content revision, or `undefined` when there is nothing to record. */
  private async prepare(event: MemoEventMessage, logger?: Logger): Promise<{ item: MemoCommandPayload<'record-summary'>; source: SummarySource } | undefined> {
    if (!startsContentRevision(event)) return undefined;
    const { memoId, projectId, revision, content: ref } = event.data as { memoId: string; projectId: string; revision: number; content: ContentRef };
    if (event.memo && event.memo.revision > revision) return undefined;
    try {
      const content = await this.content.read(projectId, memoId, ref);
      // Replaced by a newer revision (its blob is gone): the result would be dropped anyway.
      if (content === undefined) return undefined;
      const result = await this.summarize(content, logger);
      const tags = generatedTags(result.tags);
      const sealed = await this.content.keyring.sealJson(projectId, memoId, { ...result, tags } satisfies SummaryResult, SEAL_FOR_TRANSIT);
      return { item: { projectId, memoId, revision, sealed }, source: result.source ?? 'model' };
    } catch (error) {
      // The memo was erased meanwhile.
      if (isKeyErased(error)) return undefined;
      throw error;
    }
  }

  async recordFailure(event: MemoEventMessage, error: unknown): Promise<void> {
    if (!startsContentRevision(event)) return;
    const { memoId, projectId, revision } = event.data as { memoId: string; projectId: string; revision: number };
    await this.commands.send('record-processing-failure', {
      projectId,
      memoId,
      revision,
      stage: 'summarizing',
      message: String((error as Error)?.message ?? error).slice(0, 500),
    });
  }
}
