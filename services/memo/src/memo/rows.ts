import type { TagRecord } from '@memex/contracts';
import { tagId } from '@memex/runtime';
import type { RowData } from '../eventStore/sealed';

/** Events whose data lists tags as `TagRecord`s. */
const TAGGED = new Set(['MemoCreated', 'MemoSummarized', 'MemoTagged']);

const isTagRecords = (tags: unknown): tags is TagRecord[] =>
  Array.isArray(tags) && tags.every((t) => typeof t === 'object' && t !== null && typeof (t as TagRecord).tag === 'string');

/** The tags' names, when every tag's id is the one `tagId` derives (always, for tags the decider made). */
export function derivedTagNames(memoId: string, tags: readonly TagRecord[]): string[] | undefined {
  return tags.every((t) => t.uuid === tagId(memoId, t.tag)) ? tags.map((t) => t.tag) : undefined;
}

/** Tags as records again: a name gets the id `tagId` derives; a record stays as it was kept. */
export function tagRecordsOf(memoId: string, tags: readonly (TagRecord | string)[]): TagRecord[] {
  return tags.map((t) => (typeof t === 'string' ? { uuid: tagId(memoId, t), tag: t } : t));
}

/**
 * Memo event data as an event row's sealed box keeps it: without `memoId` and `projectId` (the row
 * shows them in the clear) and with tags by name when every tag's id is the one `tagId` derives
 * (always, for tags the decider made). `whole` gives the data back as it was appended; data a
 * version before wrote (whole, ids and all) comes back as it is.
 */
export const rowData: RowData = {
  lean(type, data) {
    const { memoId, projectId: _projectId, ...rest } = data;
    const names = TAGGED.has(type) && isTagRecords(rest.tags) ? derivedTagNames(memoId as string, rest.tags) : undefined;
    if (names) rest.tags = names;
    return rest;
  },

  whole(type, lean, { memoId, projectId }) {
    if (lean.memoId !== undefined) return lean;
    const data: Record<string, unknown> = { memoId, projectId, ...lean };
    if (TAGGED.has(type) && Array.isArray(lean.tags) && lean.tags.every((t) => typeof t === 'string')) {
      data.tags = tagRecordsOf(memoId, lean.tags as string[]);
    }
    return data;
  },
};
