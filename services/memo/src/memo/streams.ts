import { createHash } from 'node:crypto';

/** The event store stream of one memo. */
export function memoStream(projectId: string, memoId: string): string {
  return `memo-${projectId}-${memoId}`;
}

/** The stream of claims on one client reference id in a project (hashed: names stay short and opaque). */
export function referenceStream(projectId: string, referenceId: string): string {
  return `memoref-${projectId}-${createHash('sha256').update(referenceId).digest('hex')}`;
}
