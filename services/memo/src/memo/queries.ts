import { MemexError, type Memo, type MemoGetRequest, type SearchResultItem, type TitleSearchRequest } from '@memex/contracts';
import type { MemoReadModel } from '../readModel/port';
import type { MemoCommandService } from './handlers';

/** GET of a memo: another project's memo is "not found", revealing nothing. */
export async function getMemo(commands: MemoCommandService, readModel: MemoReadModel, request: MemoGetRequest): Promise<Memo> {
  const { memoId, ownerProjectId } = await commands.resolve(request.projectId, request.ref);
  if (ownerProjectId !== request.projectId) throw new MemexError('MemoNotFound');
  const record = await readModel.get(memoId);
  if (!record) throw new MemexError('MemoNotFound');
  return record.memo;
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
    const first = memo.chunks.find((c) => c.chunk_index === 0) ?? memo.chunks[0];
    return {
      memo_title: memo.title,
      memo_uuid: memo.uuid,
      chunk_uuid: first?.uuid ?? null,
      chunk_content: first?.chunk_content ?? null,
      memo_summary: memo.summary,
      distance: null,
    };
  });
}
