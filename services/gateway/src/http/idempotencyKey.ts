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
