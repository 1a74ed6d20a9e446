import { startsContentRevision, type ContentRef, type MemoEventMessage, type SummaryResult } from '@memex/contracts';
import { SEAL_FOR_TRANSIT, isKeyErased, type CommandClient, type ContentStore, type Logger } from '@memex/runtime';
import type { LlmProvider } from '../llm/port';

/** Most tags generated per revision (client tags given at creation come on top). */
const MAX_GENERATED_TAGS = 8;

/**
 * Summaries and tags read at most this many characters of a revision (its beginning), so a 16 MiB
 * memo is summarized in about the time of a 256 KiB one.
 */
const SUMMARY_INPUT_CHARS = 256 * 1024;

/**
 * Summaries and tags for every new content revision, recorded through the memo service, which drops
 * them if the memo has moved to a newer revision meanwhile.
 */
export class SummaryProcessor {
  constructor(
    private readonly llm: LlmProvider,
    private readonly commands: CommandClient,
    private readonly content: ContentStore,
  ) {}

  async handle(event: MemoEventMessage, logger?: Logger): Promise<void> {
    if (!startsContentRevision(event)) return;
    const { memoId, projectId, revision, content: ref } = event.data as { memoId: string; projectId: string; revision: number; content: ContentRef };
    if (event.memo && event.memo.revision > revision) return;
    try {
      const content = await this.content.read(projectId, memoId, ref);
      // Replaced by a newer revision (its blob is gone): the result would be dropped anyway.
      if (content === undefined) return;
      const { summary, tags } = await this.llm.summarize(content.length > SUMMARY_INPUT_CHARS ? content.slice(0, SUMMARY_INPUT_CHARS) : content);
      const clean = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t.length > 0 && t.length <= 100))].slice(0, MAX_GENERATED_TAGS);
      const requestId = (logger?.bindings() as { requestId?: string } | undefined)?.requestId;
      const sealed = await this.content.keyring.sealJson(projectId, memoId, { summary, tags: clean } satisfies SummaryResult, SEAL_FOR_TRANSIT);
      await this.commands.send('record-summary', { projectId, memoId, revision, sealed }, requestId ? { requestId } : {});
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
