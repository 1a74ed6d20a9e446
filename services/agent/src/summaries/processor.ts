import { startsContentRevision, type MemoEventMessage } from '@memex/contracts';
import type { CommandClient, Logger } from '@memex/runtime';
import type { LlmProvider } from '../llm/port';

/** Most tags generated per revision (client tags given at creation come on top). */
export const MAX_GENERATED_TAGS = 8;

/**
 * Summaries and tags for every new content revision, recorded through the memo service, which drops
 * them if the memo has moved to a newer revision meanwhile.
 */
export class SummaryProcessor {
  constructor(
    private readonly llm: LlmProvider,
    private readonly commands: CommandClient,
  ) {}

  async handle(event: MemoEventMessage, logger?: Logger): Promise<void> {
    if (!startsContentRevision(event)) return;
    const { memoId, projectId, revision, content } = event.data as { memoId: string; projectId: string; revision: number; content: string };
    if (event.memo && event.memo.revision > revision) return;
    const { summary, tags } = await this.llm.summarize(content);
    const clean = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t.length > 0 && t.length <= 100))].slice(0, MAX_GENERATED_TAGS);
    const requestId = (logger?.bindings() as { requestId?: string } | undefined)?.requestId;
    await this.commands.send('record-summary', { projectId, memoId, revision, summary, tags: clean }, requestId ? { requestId } : {});
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
