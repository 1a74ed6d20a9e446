/**
 * `memex resummarize` over HTTPS against the chaos peer: memos summarized while the model was down
 * carry the extractive fallback; once the model is back, the command redoes them through the model
 * by replay (no upload, no new revision), only the fallbacks with --fallback_only, every summarized
 * memo without it; the queued work survives an agent restart. And a 429's `Retry-After` paces the
 * summary retries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, MemoHistoryResponse, MemoStatusResponse } from '@memex/contracts';
import { loadAgentConfig, startAgentService, type AgentService } from '@memex/agent';
import { chaosProse, eventually, startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { httpsJson } from '../support/https';
import { listenHttps } from '../support/httpsListener';
import { runTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

const NOTES = [
  'Container ships are unloaded by gantry cranes at the harbour. Each crane moves thirty containers an hour.',
  'Pilots bring the ships through the channel at high tide. The channel is dredged every spring.',
  'Tugboats push the largest ships against the quay. Their crews work in shifts of twelve hours.',
];
/** What the model says about a note in fenced-JSON mode (the summary it asked for, as JSON). */
const modelSummary = (content: string) => chaosProse({ messages: [{ content: `<note>\n${content}\n</note>` }] });

// Each CLI call is a Node process with tsx: seconds apiece on a busy machine.
describe('memex resummarize through the chaos peer, over HTTPS', { timeout: 300_000 }, () => {
  let peer: OpenAiPeer;
  let stack: Stack;
  let https: { url: string; ca: string; close(): Promise<void> };
  let key: string;
  let projectId: string;
  let env: Record<string, string>;
  const agents: AgentService[] = [];

  beforeAll(async () => {
    peer = await startOpenAiPeer({ models: ['chaos-model'] });
    stack = await startStack({
      env: {
        LLM_PROVIDER: 'openai',
        OPENAI_BASE_URL: peer.url,
        OPENAI_MAX_RETRIES: '0',
        OPENAI_TIMEOUT_MS: '3000',
        LLM_TIMEOUT_MS: '5000',
        LLM_SUMMARY_ATTEMPTS: '2',
        LLM_SUMMARY_BACKOFF_MS: '100',
        MEMEX_RATE_LIMIT: '0',
      },
    });
    https = await listenHttps(stack.app, stack.dataDir);
    ({ key, projectId } = await stack.project('resummarize'));
    env = { MEMEX_URL: https.url, MEMEX_DATA_DIR: stack.dataDir, MEMEX_API_KEY: key };
  }, 120_000);
  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    await https?.close();
    await stack?.stop();
    await peer?.close();
  });

  const call = <T>(method: string, path: string, body?: unknown, as = key) => httpsJson<T>(method, `${https.url}${path}`, { ca: https.ca, key: as, ...(body !== undefined ? { body } : {}) });
  const ok = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await call<T>(method, path, body);
    expect(res.status, res.text).toBeLessThan(300);
    return res.body;
  };
  const create = async (title: string, content: string) => (await ok<{ memo_uuid: string }>('POST', '/api/v1/memo', { title, content })).memo_uuid;
  const processed = (id: string) => eventually(async () => ((m) => (m.pending ? undefined : m))(await ok<Memo>('GET', `/api/v1/memo/${id}`)), 20_000);
  const status = (id: string) => ok<MemoStatusResponse>('GET', `/api/v1/memo/${id}/status`);
  const history = async (id: string) => (await ok<MemoHistoryResponse>('GET', `/api/v1/memo/${id}/history`)).revisions;
  const summaries = async (id: string) => (await history(id)).filter((r) => r.event === 'MemoSummarized').map((r) => r.summary_source);
  const memex = (...args: string[]) => runTs('packages/cli/src/main.ts', args, env);
  const drained = () => eventually(async () => ((await ok<{ pending: number }>('GET', '/api/v1/project/resummarize')).pending === 0 ? true : undefined), 60_000);

  let down: string[] = [];
  let up: string;

  it('redoes only the fallbacks with --fallback_only, once the model is back, without a new revision', async () => {
    // The model is down: both memos are processed with the extractive fallback.
    peer.chaos('server-error');
    down = [await create('Cranes', NOTES[0]!), await create('Channel', NOTES[1]!)];
    for (const id of down) {
      expect((await processed(id)).processing_error).toBeNull();
      expect(await status(id)).toMatchObject({ status: 'processed', summary_source: 'extractive-fallback' });
    }
    // The model is back (it answers JSON, in a code fence): a new memo gets the model's summary.
    peer.chaos('fenced-json');
    up = await create('Tugs', NOTES[2]!);
    expect((await processed(up)).summary).toBe(modelSummary(NOTES[2]!));
    const before = await Promise.all([...down, up].map(async (id) => ({ memo: await processed(id), history: await history(id) })));

    const run = await memex('resummarize', '--project', projectId, '--fallback-only', '--wait');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('queued 2 memos to summarize again (extractive fallbacks only)');
    await drained();

    for (const [i, id] of down.entries()) {
      const memo = await processed(id);
      expect(memo.summary).toBe(modelSummary(NOTES[i]!));
      expect(memo.tags.map((t) => t.tag)).toEqual(expect.arrayContaining(['chaos', 'fenced']));
      expect(await status(id)).toMatchObject({ status: 'processed', summary_source: 'model', summary_reason: null });
      // History keeps the replaced summary and shows the new one; nothing was uploaded or re-chunked.
      expect(await summaries(id)).toEqual(['extractive-fallback', 'model']);
      const revisions = await history(id);
      expect(revisions.filter((r) => r.event === 'MemoContentChanged' || r.event === 'MemoChunked')).toEqual(
        before[i]!.history.filter((r) => r.event === 'MemoContentChanged' || r.event === 'MemoChunked'),
      );
      expect(Math.max(...revisions.map((r) => r.content_revision ?? 0))).toBe(1);
      expect(memo.content).toBe(NOTES[i]);
    }
    // The memo already summarized by the model is untouched.
    expect(await summaries(up)).toEqual(['model']);
    expect(await processed(up)).toEqual(before[2]!.memo);
  });

  it('redoes every summarized memo without --fallback_only', async () => {
    peer.chaos(undefined);
    const again = JSON.stringify({ summary: 'Harbour work, summarized again by the model.', tags: ['harbour'] });
    peer.script([{ content: again }], [{ content: again }], [{ content: again }]);
    const run = await memex('resummarize', '--json', '--wait');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ memos: 3, fallback_only: false });
    await drained();
    for (const id of [...down, up]) {
      const memo = await processed(id);
      expect(memo.summary).toBe('Harbour work, summarized again by the model.');
      expect(await status(id)).toMatchObject({ summary_source: 'model' });
      expect(Math.max(...(await history(id)).map((r) => r.content_revision ?? 0))).toBe(1);
    }
    expect(await summaries(down[0]!)).toEqual(['extractive-fallback', 'model', 'model']);
    expect(await summaries(up)).toEqual(['model', 'model']);
    expect(peer.pending).toBe(0);
  });

  it('answers bad input with 400 and a scoped key with 403, queueing nothing', async () => {
    const bad = await call<{ error: string }>('POST', '/api/v1/project/resummarize', { fallback_only: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/fallback_only must be a boolean/);
    const unknown = await call<{ error: string }>('POST', '/api/v1/project/resummarize', { fallbackOnly: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/Unknown field: 'fallbackOnly'/);
    const created = await ok<{ api_key: string }>('POST', '/api/v1/project/keys', { name: 'writer', scopes: ['memos:write', 'memos:read'] });
    const denied = await call<{ error: string }>('POST', '/api/v1/project/resummarize', {}, created.api_key);
    expect(denied.status).toBe(403);
    expect((await ok<{ pending: number }>('GET', '/api/v1/project/resummarize')).pending).toBe(0);
  });

  it('keeps the queued work across an agent restart', async () => {
    // Three more fallbacks, then one slow agent that takes one job at a time.
    peer.chaos('server-error');
    const more = await Promise.all(NOTES.map((note, i) => create(`Restart ${i}`, note)));
    for (const id of more) await processed(id);
    await stack.agent.stop();
    const slowEnv = { ...stack.env, AGENT_CONCURRENCY: '1' };
    const first = await startAgentService(loadAgentConfig(slowEnv), { instance: 'agent-first' });
    agents.push(first);
    peer.chaos('slow-first-token', { slowMs: 1_500 });
    const queued = await ok<{ memos: number }>('POST', '/api/v1/project/resummarize', { fallback_only: true });
    expect(queued.memos).toBe(3);
    // One memo redone, then the agent goes away with the others still queued.
    await eventually(async () => ((await Promise.all(more.map(status))).some((s) => s.summary_source === 'model-text') ? true : undefined), 30_000);
    await first.stop();
    const left = (await ok<{ pending: number }>('GET', '/api/v1/project/resummarize')).pending;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(3);

    agents.push(await startAgentService(loadAgentConfig(stack.env), { instance: 'agent-second' }));
    await drained();
    for (const [i, id] of more.entries()) {
      expect(await status(id)).toMatchObject({ summary_source: 'model-text' });
      expect((await processed(id)).summary).toBe(modelSummary(NOTES[i]!));
      expect(await summaries(id)).toEqual(['extractive-fallback', 'model-text']);
    }
  });

  it('waits as long as a 429 says in Retry-After before the next summary attempt', async () => {
    peer.reset();
    peer.chaos('rate-limited');
    const id = await create('Rate limited', NOTES[0]!);
    expect(await status(await processed(id).then((m) => m.uuid))).toMatchObject({ summary_source: 'extractive-fallback' });
    const attempts = peer.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.receivedAt);
    expect(attempts).toHaveLength(2);
    // Retry-After: 1 (seconds) rather than LLM_SUMMARY_BACKOFF_MS (100 ms).
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(950);
  });
});
