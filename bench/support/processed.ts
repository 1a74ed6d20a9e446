import type { Memo } from '@memex/contracts';

/**
 * Waits until every memo is processed (`pending: false`), polling the oldest not yet done
 * (processing is roughly first-in first-out); returns their chunks in all.
 */
export async function waitProcessed(
  ids: readonly string[],
  get: (id: string) => Promise<{ status: number; body: Memo }>,
  pollMs = 20,
): Promise<number> {
  let chunks = 0;
  for (const id of ids) {
    for (;;) {
      const res = await get(id);
      if (res.status === 200 && !res.body.pending) {
        chunks += res.body.chunks.length;
        break;
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
  return chunks;
}
