import { MemexError, unpackChunks, type MemoGetRequest, type MemoResolveReply, type MemoView, type SearchResultItem, type TitleSearchReply, type TitleSearchRequest } from '@memex/contracts';
import { chunkId, KeyErasedError, type ContentStore } from '@memex/runtime';
import type { MemoReadModel, MemoRecord } from '../readModel/port';
import type { MemoCommandService } from './handlers';

/** GET of a memo: another project's memo is "not found", revealing nothing. */
export async function getMemo(commands: MemoCommandService, request: MemoGetRequest): Promise<MemoView> {
  const record = await commands.find(request.projectId, request.ref, request.space);
  if (record.projectId !== request.projectId) throw new MemexError('MemoNotFound');
  const memo = await commands.withContent(record);
  if (!memo) throw new MemexError('MemoNotFound');
  return memo;
}

/** Where a route's address points: the memo's uuid and the project that owns it (MemoNotFound if none). */
export async function resolveMemo(commands: MemoCommandService, request: MemoGetRequest): Promise<MemoResolveReply> {
  const { memoId, ownerProjectId } = await commands.resolve(request.projectId, request.ref, request.space);
  return { memoId, ownerProjectId };
}

/**
 * `title_contains` / `title_startswith`: one item per live memo, ordered by title; the chunk fields
 * come from the memo's first chunk (null while it is pending) and `distance` is null. The first
 * chunk's text is cut from the memo's content when that is inline (the memo service keeps the text
 * once); content in the blob store has it kept beside (see `toMemo`).
 */
export async function searchTitles(
  commands: MemoCommandService,
  readModel: MemoReadModel,
  content: ContentStore,
  request: TitleSearchRequest,
): Promise<TitleSearchReply> {
  const records = await readModel.searchTitles(request.projectId, {
    mode: request.mode,
    query: request.query,
    filters: request.filters,
    limit: request.limit,
  });
  return Promise.all(
    records.map(async (record): Promise<SearchResultItem> => {
      const { memo } = record;
      const chunked = memo.chunk_layout.count > 0;
      return {
        memo_title: memo.title,
        memo_uuid: memo.uuid,
        chunk_uuid: chunked ? chunkId(memo.uuid, memo.chunk_revision, 0) : null,
        chunk_content: chunked ? await firstChunk(commands, content, request.projectId, record) : null,
        memo_summary: memo.summary,
        distance: null,
      };
    }),
  );
}

/** The text of a chunked memo's first chunk (empty if it was erased meanwhile). */
async function firstChunk(commands: MemoCommandService, content: ContentStore, projectId: string, record: MemoRecord): Promise<string> {
  const kept = record.memo;
  if (kept.first_chunk !== '' || (kept.content_ref.inline === undefined && kept.content_ref.event === undefined)) return kept.first_chunk;
  const memo = await commands.withContent(record);
  if (!memo) return '';
  const [first] = unpackChunks(memo.chunk_layout);
  try {
    const text = (await content.read(projectId, memo.uuid, memo.content_ref)) ?? '';
    return first ? text.slice(first.start, first.end) : '';
  } catch (error) {
    if (error instanceof KeyErasedError) return '';
    throw error;
  }
}
