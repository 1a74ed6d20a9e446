/**
 * kill -9 of the memo service in the middle of a batch (after its one append, before the read model,
 * the publish and the reply): the client's retry with its Idempotency-Key gets every memo
 * acknowledged, each created exactly once and processed to `pending: false`, and nothing else exists.
 */
import { Agent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Consumers, Streams } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { httpsJson, type HttpsResponse } from '../support/https';
import { listenHttps } from '../support/httpsListener';
import { exited, spawnTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('memo service kill -9 during a batch', () => {
  let stack: Stack;
  let https: Awaited<ReturnType<typeof listenHttps>>;
  let agent: Agent;
  let key: string;
  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpsResponse<Json>> =>
    httpsJson<Json>(method, `${https.url}${path}`, { agent, key, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0', MEMEX_COMMAND_TIMEOUT_MS: '4000' } });
    // The memo service runs as a process of its own, to be killed.
    await stack.memo.stop();
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, ca: https.ca });
    ({ key } = await stack.project('batch-crash'));
  }, 90_000);

  afterAll(async () => {
    agent?.destroy();
    await https?.close();
    await stack?.stop();
  }, 90_000);

  it('acknowledges every memo of the retried batch once, processes each once, and creates nothing else', async () => {
    const jsm = await jetstreamManager(stack.nc);
    const memoReady = () =>
      eventually(async () => {
        try {
          return (await jsm.consumers.info(Streams.memoCommands, Consumers.memoCommands)).num_waiting > 0;
        } catch {
          return false;
        }
      }, 30_000);
    const env = { ...stack.env, LOG_LEVEL: 'warn' };
    const doomed = spawnTs('services/memo/src/main.ts', [], { ...env, MEMEX_FAILPOINTS: 'memo.after-append' });
    await memoReady();

    const memos: unknown[] = Array.from({ length: 200 }, (_, i) => ({
      title: `Crash log ${i}`,
      content: `Entry ${i}: the lighthouse keeper noted the wind, the swell and the ships that passed at dusk.`,
      reference_id: `crash-${i}`,
    }));
    memos.splice(100, 0, { title: 'no content' });
    const headers = { 'idempotency-key': 'crash-import-1' };
    const first = await api('POST', '/api/v1/memo/batch', { memos }, headers);
    expect(await exited(doomed)).toBeNull();
    expect(doomed.signalCode).toBe('SIGKILL');
    // Outcome unknown for the memos the dead service took; the invalid one is refused as ever.
    expect(first.status, first.text).toBe(200);
    expect(first.body.results[100]).toEqual({ ok: false, status: 400, error: 'Content is required' });
    expect(first.body.results.filter((r: Json) => !r.ok && r.status === 504)).toHaveLength(200);

    const revived = spawnTs('services/memo/src/main.ts', [], env);
    try {
      await memoReady();
      const again = await api('POST', '/api/v1/memo/batch', { memos }, headers);
      expect(again.status, again.text).toBe(200);
      const results = again.body.results as Json[];
      expect(results[100]).toEqual({ ok: false, status: 400, error: 'Content is required' });
      const ids = results.filter((r) => r.ok).map((r) => r.memo_uuid as string);
      expect(ids).toHaveLength(200);
      expect(new Set(ids).size).toBe(200);

      // Nothing but these 200 exists; each is processed, with one MemoCreated in its history.
      // (The list may time out while the revived service still catches up.)
      const list = await eventually(async () => {
        const res = await api('GET', '/api/v1/memo?page_size=1');
        return res.status === 200 ? res : undefined;
      }, 30_000);
      expect(list.body.count, list.text).toBe(200);
      await eventually(async () => {
        const pending = await Promise.all(ids.map(async (id) => (await api('GET', `/api/v1/memo/${id}`)).body.pending as boolean));
        return pending.every((p) => p === false);
      }, 90_000, 500);
      for (const [i, id] of ids.entries()) {
        const history = (await api('GET', `/api/v1/memo/${id}/history`)).body.revisions as Json[];
        expect({ i, created: history.filter((h) => h.event === 'MemoCreated').length }).toEqual({ i, created: 1 });
      }
      expect((await api('GET', '/api/v1/memo/crash-7?id_type=reference_id')).body.uuid).toBe(ids[7]);
    } finally {
      revived.kill('SIGTERM');
      await exited(revived);
    }
  }, 180_000);
});
