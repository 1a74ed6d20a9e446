import { startsContentRevision, type ContentRef, type MemoEventMessage, type SummaryResult } from '@memex/contracts';
import { SEAL_FOR_TRANSIT, isKeyErased, type CommandClient, type ContentStore, type Logger } from '@memex/runtime';
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
    if (!startsContentRevision(event)) return;
    const { memoId, projectId, revision, content: ref } = event.data as { memoId: string; projectId: string; revision: number; content: ContentRef };
    if (event.memo && event.memo.revision > revision) return;
    try {
      const content = await this.content.read(projectId, memoId, ref);
      // Replaced by a newer revision (its blob is gone): the result would be dropped anyway.
      if (content === undefined) return;
      const result = await this.summarize(content, logger);
      const tags = generatedTags(result.tags);
      const requestId = (logger?.bindings() as { requestId?: string } | undefined)?.requestId;
      const sealed = await this.content.keyring.sealJson(projectId, memoId, { ...result, tags } satisfies SummaryResult, SEAL_FOR_TRANSIT);
      await this.commands.send('record-summary', { projectId, memoId, revision, sealed }, requestId ? { requestId } : {});
      this.health.summarized(result.source ?? 'model');
    } catch (error) {
      // The memo was erased meanwhile.
      if (isKeyErased(error)) return;
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
