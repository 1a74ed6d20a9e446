import { MemexError } from '@memex/contracts';
import { uuidV5 } from '@memex/runtime';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The memo id an `Idempotency-Key` names in a project, the same for every retry with that key, or
 * undefined without the header. A key that is not 1-255 visible ASCII characters is an InvalidRequest.
 */
export function idempotentMemoId(projectId: string, header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (!IDEMPOTENCY_KEY.test(header)) throw new MemexError('InvalidRequest', 'Idempotency-Key must be 1-255 visible ASCII characters');
  return uuidV5(`idempotency:${projectId}:${header}`);
}

/**
 * The memo ids of a batch sent with an `Idempotency-Key`: the i-th from the key and i, the same for
 * every retry of the batch. `claim` is the key's own id (as for one memo), under which the batch's
 * body is remembered, so one key names one request whichever route it went to.
 */
export function idempotentMemoIds(projectId: string, header: string | string[] | undefined, count: number): { claim: string; memoIds: string[] } | undefined {
  const claim = idempotentMemoId(projectId, header);
  if (claim === undefined) return undefined;
  return { claim, memoIds: Array.from({ length: count }, (_, i) => uuidV5(`idempotency:${projectId}:${header as string}#${i}`)) };
}
