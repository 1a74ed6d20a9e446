import { MemexError, matchesFilters, stampIntoSpace, type CreateMemoInput, type Filter, type MemoView, type UpdateMemoInput } from '@memex/contracts';

/**
 * A new memo of a scoped caller lands inside its space: `eq` filters on source or metadata fill
 * those fields when the body leaves them out; a body that contradicts the space is Access denied.
 */
export function createInSpace<T extends CreateMemoInput>(space: readonly Filter[], input: T): T {
  if (space.length === 0) return input;
  const stamped = stampIntoSpace(space, {
    title: input.title,
    source: input.source,
    reference_id: input.referenceId,
    tags: input.tags,
    metadata: input.metadata,
  });
  return { ...input, ...(stamped.source !== undefined ? { source: stamped.source } : {}), ...(stamped.metadata ? { metadata: stamped.metadata } : {}) };
}

/** A PATCH may not move a memo out of the caller's space: the memo as it would be must still match. */
export function assertStaysInSpace(space: readonly Filter[], view: MemoView, input: UpdateMemoInput): void {
  if (space.length === 0) return;
  const after = {
    title: input.title ?? view.title,
    source: input.source !== undefined ? input.source : view.source,
    clientReferenceId: input.clientReferenceId !== undefined ? input.clientReferenceId : view.client_reference_id,
    tags: view.tags.map((t) => t.tag),
    metadata: input.metadata ?? view.metadata,
  };
  if (!matchesFilters(after, space)) throw new MemexError('AccessDenied');
}
