/**
 * The forms of a memo document in the SQLite read model's `doc` column, and the one seam that reads
 * them: lean and deflated (written by default: tags by name alone when every tag's id is the one
 * `tagId` derives, always so for tags the decider made), or the whole memo as JSON text (written
 * with `compact: false`, the form the version before reads; see formats.ts). `readDoc` takes
 * either; `wholeDoc` upcasts it to the current `MemoView`.
 */
import type { MemoView, TagRecord } from '@memex/contracts';
import { compressText, decompressText } from '@memex/runtime';
import { derivedTagNames, tagRecordsOf } from '../memo/rows';

/** A document as a row keeps it: tags as records, or by name when their ids are the derived ones. */
export type StoredDoc = Omit<MemoView, 'tags'> & { tags: (TagRecord | string)[] };

/** The `doc` column for a memo, in the lean form or (`compact: false`) the whole one. */
export function writeDoc(memo: MemoView, { compact }: { compact: boolean }): string | Buffer {
  if (!compact) return JSON.stringify(memo);
  const names = derivedTagNames(memo.uuid, memo.tags);
  return compressText(JSON.stringify(names ? { ...memo, tags: names } : memo));
}

/** A `doc` column of either form, as stored; filters read it before the tag ids are derived. */
export const readDoc = (doc: string | Buffer): StoredDoc => JSON.parse(decompressText(doc)) as StoredDoc;

/** A stored document as the current `MemoView`, every tag with its id. */
export const wholeDoc = (doc: StoredDoc): MemoView => ({ ...doc, tags: tagRecordsOf(doc.uuid, doc.tags) });
