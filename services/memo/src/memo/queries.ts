import { MemexError, type MemoGetRequest, type MemoResolveReply, type MemoView, type SearchResultItem, type TitleSearchRequest } from '@memex/contracts';
import { chunkId } from '@memex/runtime';
import type { MemoReadModel } from '../readModel/port';
import type { MemoCommandService } from './handlers';

/** GET of a memo: another project's memo is "not found", revealing nothing. */
export async function getMemo(commands: MemoCommandService, readModel: MemoReadModel, request: MemoGetRequest): Promise<MemoView> {
  const { memoId, ownerProjectId } = await commands.resolve(request.projectId, request.ref);
  if (ownerProjectId !== request.projectId) throw new MemexError('MemoNotFound');
  const record = await readModel.get(memoId);
  if (!record) throw new MemexError('MemoNotFound');
  return record.memo;
}

/** Where a route's address points: the memo's uuid and the project that owns it (MemoNotFound if none). */
export async function resolveMemo(commands: MemoCommandService, request: MemoGetRequest): Promise<MemoResolveReply> {
  const { memoId, ownerProjectId } = await commands.resolve(request.projectId, request.ref);
  return { memoId, ownerProjectId };
}

/**
 * `title_contains` / `title_startswith`: one item per live memo, ordered by title; the chunk fields
 * come from the memo's first chunk (null while it is pending) and `distance` is null.
 */
export async function searchTitles(readModel: MemoReadModel, request: TitleSearchRequest): Promise<SearchResultItem[]> {
  const records = await readModel.searchTitles(request.projectId, {
    mode: request.mode,
    query: request.query,
    filters: request.filters,
    limit: request.limit,
  });
  return records.map(({ memo }) => {
    const chunked = memo.chunk_layout.count > 0;
    return {
      memo_title: memo.title,
      memo_uuid: memo.uuid,
      chunk_uuid: chunked ? chunkId(memo.uuid, memo.chunk_revision, 0) : null,
      chunk_content: chunked ? memo.first_chunk : null,
      memo_summary: memo.summary,
      distance: null,
    };
  });
}
