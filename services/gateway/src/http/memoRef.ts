import { MemexError, isUuid, parseIdType, type MemoRef } from '@memex/contracts';

/**
 * The memo a route's `{memo_id}` and `id_type` name: a lower-cased UUID, or a client reference id of
 * at most 255 characters. A bad `id_type` or a malformed UUID is an InvalidRequest (400).
 */
export function memoRef(params: unknown, querystring: unknown): MemoRef {
  const idType = parseIdType((querystring as Record<string, unknown>).id_type);
  const id = (params as { memo_id: string }).memo_id;
  if (idType === 'memo_uuid' && !isUuid(id)) throw new MemexError('InvalidRequest', 'memo_id must be a UUID when id_type is memo_uuid');
  if (id.length > 255) throw new MemexError('InvalidRequest', 'memo_id must be at most 255 characters');
  return { idType, id: idType === 'memo_uuid' ? id.toLowerCase() : id };
}
