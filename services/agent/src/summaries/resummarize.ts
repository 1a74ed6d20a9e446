import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import {
  Consumers,
  MemexError,
  QueueGroups,
  Streams,
  Subjects,
  type MemoAddressRequest,
  type MemoGetReply,
  type MemoGetRequest,
  type MemoStatusReply,
  type ResummarizeReply,
  type ResummarizeRequest,
  type SummaryJob,
  type SummaryResult,
} from '@memex/contracts';
import {
  SEAL_FOR_TRANSIT,
  decodeJson,
  encodeJson,
  isKeyErased,
  publishToStream,
  query,
  runConsumer,
  serveQuery,
  type CommandClient,
  type ConsumerRunner,
  type ContentStore,
  type Logger,
  type Metrics,
  type RetryOverrides,
  type Slots,
} from '@memex/runtime';
import type { ModelHealth } from '../llm/health';
import type { SummaryProcessor } from './processor';
import { summarizedMemos } from './replay';
import { generatedTags } from './tags';

/** Jobs published at once while queueing a project's memos. */
const PUBLISH_WINDOW = 64;
const QUERY_TIMEOUT_MS = 30_000;

export type ResummaryOutcome = 'replaced' | 'skipped' | 'gone' | 'model_unavailable';

export interface ResummarizeDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  content: ContentStore;
  commands: CommandClient;
  summaries: SummaryProcessor;
  health: ModelHealth;
  /** Shared with the live summaries: AGENT_CONCURRENCY model calls at once in all. */
  slots: Slots;
  /** Jobs in hand at once (each waits for a slot for its model call). */
  concurrency: number;
  logger: Logger;
  metrics?: Metrics;
  retry?: RetryOverrides;
}

/**
 * `memex resummarize`: redoes summaries through the model once it is back, by replay, without any
 * upload. A request replays the memo event log for the project's live, summarized memos (with
 * `fallbackOnly`, those whose summary is `extractive-fallback`) and queues one job per memo on a
 * JetStream work queue, so the work survives a restart; the agents take the jobs with bounded
 * concurrency and record each new summary with `replace`. A job is idempotent: it checks the memo
 * again when taken (erased, or no longer a fallback with `fallbackOnly`: skipped), and the memo
 * service drops a summary for a revision that is no longer current. A model still failing leaves
 * the memo's summary as it was.
 */
export class Resummarizer {
  private readonly outcomes;

  constructor(private readonly deps: ResummarizeDeps) {
    this.outcomes = deps.metrics?.counter('memex_resummaries_total', 'Queued re-summaries taken, by outcome');
  }

  /** Queues the project's chosen memos; answers how many. */
  async queue(request: ResummarizeRequest): Promise<ResummarizeReply> {
    const { nc, content } = this.deps;
    const memos = await summarizedMemos(nc, content.keyring, request.projectId);
    const chosen = request.fallbackOnly ? memos.filter((m) => m.source === 'extractive-fallback') : memos;
    const subject = Subjects.summaryJobs(request.projectId);
    for (let i = 0; i < chosen.length; i += PUBLISH_WINDOW) {
      await Promise.all(
        chosen.slice(i, i + PUBLISH_WINDOW).map(({ memoId, revision }) =>
          publishToStream(nc, subject, encodeJson({ projectId: request.projectId, memoId, revision, fallbackOnly: request.fallbackOnly } satisfies SummaryJob)),
        ),
      );
    }
    this.deps.logger.info({ projectId: request.projectId, memos: chosen.length, fallbackOnly: request.fallbackOnly }, 're-summaries queued');
    return { memos: chosen.length, fallback_only: request.fallbackOnly };
  }

  /** One job: the memo's current content through the model, recorded as a replacement. */
  async redo(job: SummaryJob, logger: Logger): Promise<ResummaryOutcome> {
    const { nc, content, commands, summaries, slots, health } = this.deps;
    const { projectId, memoId, revision } = job;
    const address = { projectId, ref: { idType: 'memo_uuid' as const, id: memoId } };
    try {
      const status = await query<MemoAddressRequest, MemoStatusReply>(nc, Subjects.query.memoStatus, address, { timeoutMs: QUERY_TIMEOUT_MS });
      // Not summarized (a newer revision is on its way through the live pipeline), or no longer a fallback.
      if (status.summary_source === null) return 'skipped';
      if (job.fallbackOnly && status.summary_source !== 'extractive-fallback') return 'skipped';
      const memo = await query<MemoGetRequest, MemoGetReply>(nc, Subjects.query.memoGet, address, { timeoutMs: QUERY_TIMEOUT_MS });
      const text = await content.read(projectId, memoId, memo.content_ref);
      if (text === undefined) return 'skipped';
      const result = await slots.run(() => summaries.summarize(text, logger));
      if (result.source === 'extractive-fallback') {
        logger.warn({ memoId, reason: result.reason }, 're-summary: the model is still failing; the memo keeps its summary');
        return 'model_unavailable';
      }
      const sealed = await content.keyring.sealJson(projectId, memoId, { ...result, tags: generatedTags(result.tags) } satisfies SummaryResult, SEAL_FOR_TRANSIT);
      const { result: recorded } = await commands.send('record-summary', { projectId, memoId, revision, sealed, replace: true });
      if (!recorded.applied) return 'skipped';
      health.summarized(result.source ?? 'model');
      return 'replaced';
    } catch (error) {
      if (isKeyErased(error) || (error instanceof MemexError && error.code === 'MemoNotFound')) return 'gone';
      throw error;
    }
  }

  /** Takes the queued jobs and answers requests to queue more. */
  async serve(): Promise<{ runner: ConsumerRunner; subscriptions: Subscription[] }> {
    const { nc, js, logger, metrics, retry, concurrency } = this.deps;
    const log = logger.child({ consumer: Consumers.resummarize });
    const runner = await runConsumer({
      js,
      stream: Streams.summaryJobs,
      consumer: Consumers.resummarize,
      logger: log,
      concurrency,
      ...(metrics ? { metrics } : {}),
      ...(retry ? { retry } : {}),
      handle: async (msg) => {
        try {
          const outcome = await this.redo(decodeJson<SummaryJob>(msg.data), log);
          this.outcomes?.inc({ outcome });
          return { kind: 'ack' };
        } catch (error) {
          return { kind: 'retry', error };
        }
      },
    });
    const subscriptions = [
      serveQuery<ResummarizeRequest, unknown>(nc, {
        subject: Subjects.query.agentResummarize,
        queue: QueueGroups.agent,
        logger,
        ...(metrics ? { metrics } : {}),
        handler: (r) => this.queue(r),
      }),
    ];
    return { runner, subscriptions };
  }
}
