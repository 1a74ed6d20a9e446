/** Test memos for the index's suites, and for fixtures bundled without vitest (test/deploy). */
import type { MemoAttributes } from '@memex/contracts';

/** Catalog attributes of a test memo (revision 1, live, no filterable values) with overrides. */
export function attrs(projectId: string, memoId: string, over: Partial<MemoAttributes> = {}): MemoAttributes {
  return {
    projectId,
    memoId,
    revision: 1,
    title: 'A memo',
    summary: 'About things.',
    source: null,
    clientReferenceId: null,
    memoType: 'text',
    tags: [],
    metadata: {},
    archived: false,
    expirationDate: null,
    ...over,
  };
}
