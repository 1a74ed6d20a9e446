/**
 * The user's path through a running Memex, over HTTPS: store a memo, wait until it is processed,
 * find it by search, and ask the agent about it. Shared by the suites that run Memex against
 * containers (NATS cluster, Compose stack).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { ChatResponse, Memo, SearchResultItem } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson, type HttpsResponse } from '../../support/https';

export type Api = <T = unknown>(method: string, path: string, body?: unknown, key?: string, headers?: Record<string, string>) => Promise<HttpsResponse<T>>;

/** Calls the gateway at `base` (https://localhost:PORT), trusting `ca`. */
export function httpsApi(base: string, ca: string | Buffer): Api {
  return (method, path, body, key, headers) =>
    httpsJson(method, `${base}${path}`, { ca, ...(key ? { key } : {}), ...(headers ? { headers } : {}), ...(body === undefined ? {} : { body }) });
}

/** Waits until the gateways know a new key (they follow the key store through a KV watch). */
export async function waitForKey(api: Api, key: string, timeoutMs = 15_000): Promise<void> {
  await eventually(async () => (await api('GET', `/api/v1/memo/${randomUUID()}`, undefined, key)).status === 404, timeoutMs, 100);
}

export interface FlowOptions {
  /** How long processing (chunks, embeddings, summary, tags) may take. */
  processingTimeoutMs?: number;
  /** The built-in provider answers from the retrieved text, so the answer must cite the memo. */
  expectCitation?: boolean;
  /**
   * Writes as a careful client does during a failover: with an Idempotency-Key, sent again after a
   * 503 or 504 (the outcome of a 504 is unknown; the key makes the retry safe) until this long has passed.
   */
  retryWritesForMs?: number;
}

export async function memoSearchChatFlow(api: Api, key: string, options: FlowOptions = {}): Promise<{ memoId: string; chatId: string }> {
  const reference = `harbour-${randomUUID().slice(0, 8)}`;
  const write = () =>
    api<{ ok: boolean; memo_uuid: string }>(
      'POST',
      '/api/v1/memo',
      {
        title: 'Harbour logistics',
        content:
          'Container ships unload at the harbour cranes every morning. Trucks carry the containers inland to the rail terminal. ' +
          'The night shift inspects the cranes and logs every fault.',
        reference_id: reference,
        tags: ['ops'],
        metadata: { region: 'north' },
      },
      key,
      { 'idempotency-key': reference },
    );
  let created = await write();
  const retryUntil = Date.now() + (options.retryWritesForMs ?? 0);
  while ((created.status === 503 || created.status === 504) && Date.now() < retryUntil) {
    await new Promise((r) => setTimeout(r, 1_000));
    created = await write();
  }
  expect(created.status, created.text).toBe(200);
  const memoId = created.body.memo_uuid;

  const processed = await eventually(
    async () => {
      const memo = await api<Memo>('GET', `/api/v1/memo/${reference}?id_type=reference_id`, undefined, key);
      return memo.status === 200 && !memo.body.pending ? memo.body : undefined;
    },
    options.processingTimeoutMs ?? 60_000,
    250,
  );
  expect(processed.uuid).toBe(memoId);
  expect(processed.chunks.length).toBeGreaterThan(0);
  expect(processed.summary).not.toBe('');
  expect(processed.processing_error).toBeNull();

  const found = await api<{ results: SearchResultItem[] }>(
    'POST',
    '/api/v1/search',
    {
      query: 'trucks carry containers inland',
      search_method: 'chunk_vector_search',
      filters: [{ field: 'region', operator: 'eq', value: 'north', filter_type: 'custom_metadata' }],
    },
    key,
  );
  expect(found.status, found.text).toBe(200);
  expect(found.body.results[0]?.memo_uuid).toBe(memoId);

  const chat = await api<ChatResponse>('POST', '/api/v1/chat', { query: 'Where do the trucks carry the containers?' }, key);
  expect(chat.status, chat.text).toBe(200);
  expect(chat.body.response.trim()).not.toBe('');
  if (options.expectCitation) expect(chat.body.citations.map((c) => c.memo_uuid)).toContain(memoId);
  return { memoId, chatId: chat.body.chat_id };
}
