import type { TagRecord } from '@memex/contracts';
import { tagId } from '@memex/runtime';
import type { RowData } from '../eventStore/sealed';

/** Events whose data lists tags as `TagRecord`s. */
const TAGGED = new Set(['MemoCreated', 'MemoSummarized', 'MemoTagged']);

const isTagRecords = (tags: unknown): tags is TagRecord[] =>
  Array.isArray(tags) && tags.every((t) => typeof t === 'object' && t !== null && typeof (t as TagRecord).tag === 'string');

/**
 * Memo event data as an event row's sealed box keeps it: without `memoId` and `projectId` (the row
 * shows them in the clear) and with tags by name when every tag's id is the one `tagId` derives
 * (always, for tags the decider made). `whole` gives the data back as it was appended; data a
 * version before wrote (whole, ids and all) comes back as it is.
 */
export const rowData: RowData = {
  lean(type, data) {
    const { memoId, projectId: _projectId, ...rest } = data;
    if (TAGGED.has(type) && isTagRecords(rest.tags) && rest.tags.every((t) => t.uuid === tagId(memoId as string, t.tag))) {
      rest.tags = rest.tags.map((t) => t.tag);
    }
    return rest;
  },

  whole(type, lean, { memoId, projectId }) {
    if (lean.memoId !== undefined) return lean;
    const data: Record<string, unknown> = { memoId, projectId, ...lean };
    if (TAGGED.has(type) && Array.isArray(lean.tags) && lean.tags.every((t) => typeof t === 'string')) {
      data.tags = (lean.tags as string[]).map((tag) => ({ uuid: tagId(memoId, tag), tag }));
    }
    return data;
  },
};
