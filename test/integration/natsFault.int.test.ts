/**
 * The fault test for NATS: the stack as `pnpm start` runs it, under write load, with its nats-server
 * killed (kill -9) and left to the start script to restart, several times. Every POST answered 200
 * must be there afterwards exactly once, readable and searchable; /readyz must drop within a second
 * of the kill and come back; writes sent during the outage are refused with 503 at once, and none is left to hang.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, SearchResultItem } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { startProcessStack, type ProcessStack } from '../support/processStack';

const KILLS = 3;
const WRITERS = 8;
/** The gateway's default MEMEX_COMMAND_TIMEOUT_MS: a memo write's whole time budget. */
const COMMAND_TIMEOUT_MS = 10_000;
/** On top of the budget: the answer's HTTPS round trip on a busy machine. */
const ANSWER_MARGIN_MS = 3_000;

interface Write {
  token: string;
  status: number;
  ms: number;
  startedAt: number;
  memoUuid?: string;
}

describe('nats-server killed under write load', () => {
  let stack: ProcessStack;
  beforeAll(async () => {
    stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', MEMEX_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS) });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const api = <T>(method: string, path: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${path}`, { ca: stack.ca, key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  const natsPid = () => Number(readFileSync(join(stack.dataDir, 'nats', 'nats-server.pid'), 'utf8').trim());

  it(`loses and duplicates no acknowledged write across ${KILLS} kills; readiness follows NATS`, async () => {
    const writes: Write[] = [];
    let writing = true;
    const writer = async (w: number) => {
      for (let n = 0; writing; n++) {
        const token = `fz${w}x${n}q`;
        const startedAt = Date.now();
        const res = await api<{ memo_uuid?: string }>('POST', '/api/v1/memo', {
          title: `fault ${token}`,
          content: `Harbour log ${token}. The cranes unloaded containers for ${token} at dawn.`,
          reference_id: token,
        }).catch(() => ({ status: 0, body: {} as { memo_uuid?: string } }));
        writes.push({ token, status: res.status, ms: Date.now() - startedAt, startedAt, ...(res.body?.memo_uuid ? { memoUuid: res.body.memo_uuid } : {}) });
        // A refused write is not retried at full speed: the client backs off a little, as clients do.
        if (res.status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
    };

    // Readiness as a probe sees it, every 50 ms.
    const readiness: { at: number; ready: boolean }[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const res = await api('GET', '/readyz').catch(() => ({ status: 0 }));
        readiness.push({ at: Date.now(), ready: res.status === 200 });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));

    const outages: { lostAt: number; downUntil: number; lostMs: number; backMs: number }[] = [];
    try {
      for (let k = 0; k < KILLS; k++) {
        await new Promise((r) => setTimeout(r, 3_000));
        const before = writes.filter((x) => x.status === 200).length;
        expect(before, 'writes succeed before the kill').toBeGreaterThan(0);
        const pid = natsPid();
        const killedAt = Date.now();
        process.kill(pid, 'SIGKILL');
        const lost = await eventually(() => readiness.find((r) => r.at > killedAt && !r.ready), 5_000, 10);
        const back = await eventually(() => readiness.find((r) => r.at > lost.at && r.ready), 60_000, 50);
        // The last probe that still saw NATS down: until then the gateway knew of the outage.
        const downUntil = Math.max(...readiness.filter((r) => r.at >= lost.at && r.at < back.at && !r.ready).map((r) => r.at));
        outages.push({ lostAt: lost.at, downUntil, lostMs: lost.at - killedAt, backMs: back.at - killedAt });
        expect(natsPid(), 'the start script restarted nats-server').not.toBe(pid);
        // Writes go through again after the recovery: within a second or two here, but twice in full CI
        // runs (other suites beside this one) none did for 30 s after a kill, every write answered 504;
        // not explained yet. The bound is about recovering; a failure says what the writes since the
        // kill got (503 the gateway saw NATS down, 504 the command went unanswered or could not be
        // stored, 0 no connection) and the stack's last warnings.
        const after = writes.filter((x) => x.status === 200).length;
        await eventually(() => writes.filter((x) => x.status === 200).length > after + WRITERS, 60_000, 50).catch((error: unknown) => {
          const since = writes.filter((x) => x.startedAt >= killedAt);
          const got = since.reduce<Record<number, number>>((m, x) => ({ ...m, [x.status]: (m[x.status] ?? 0) + 1 }), {});
          const logs = stack.output().split('\n').filter((line) => /"level":(4|5)0|warn|error/i.test(line)).slice(-40).join('\n');
          throw new Error(`writes did not resume after kill ${k + 1} (readiness back after ${back.at - killedAt} ms); since the kill: ${JSON.stringify(got)}\n${logs}`, { cause: error });
        });
      }
    } finally {
      writing = false;
      probing = false;
      await Promise.all(writers);
      await prober;
    }

    const acked = writes.filter((x) => x.status === 200);
    const refused = writes.filter((x) => x.status !== 200);
    const statuses = refused.reduce<Record<number, number>>((m, x) => ({ ...m, [x.status]: (m[x.status] ?? 0) + 1 }), {});
    // A write sent while the gateway already knows NATS is down (the probe saw readiness drop) is
    // refused at once; a write in flight at the kill ends within its time budget (503 or 504: it may be
    // answered 503 once the reconnect's first publish is refused).
    // (A probe's answer left the gateway a moment before it was recorded, hence the 100 ms margin.)
    const knownOutage = (w: Write) => outages.some((o) => w.startedAt > o.lostAt && w.startedAt < o.downUntil - 100);
    const sentDuringOutage = refused.filter(knownOutage);
    const inFlightAtKill = refused.filter((w) => !knownOutage(w));
    const slowest = (ws: Write[]) => Math.max(0, ...ws.map((x) => x.ms));
    console.log(
      `NATS kills: ${outages.map((o) => `readiness lost after ${o.lostMs} ms, back after ${o.backMs} ms`).join('; ')}\n` +
        `writes: ${writes.length} sent, ${acked.length} acknowledged, refused by status ${JSON.stringify(statuses)}; ` +
        `sent during an outage ${sentDuringOutage.length} (slowest ${slowest(sentDuringOutage)} ms), ` +
        `in flight at a kill ${inFlightAtKill.length} (slowest ${slowest(inFlightAtKill)} ms)`,
    );
    // The link loss itself is seen at once (readiness.int.test.ts); here a probe's own HTTPS round trip
    // on a busy machine comes on top.
    for (const o of outages) expect(o.lostMs).toBeLessThanOrEqual(1_500);
    // Refusals are 503 (NATS unreachable) or 504 (in flight at the kill: outcome unknown to the
    // client); never a 500.
    expect(Object.keys(statuses).every((s) => ['503', '504'].includes(s)), JSON.stringify(statuses)).toBe(true);
    // Refused at once means well inside the 10 s command deadline a hanging write would wait for.
    expect(slowest(sentDuringOutage)).toBeLessThan(COMMAND_TIMEOUT_MS / 2);
    expect(slowest(inFlightAtKill)).toBeLessThan(COMMAND_TIMEOUT_MS + ANSWER_MARGIN_MS);

    // Every acknowledged write is there once: readable, processed, found by its title and by search.
    const missing: string[] = [];
    const duplicated: string[] = [];
    const unsearchable: string[] = [];
    const unprocessed: string[] = [];
    for (const w of acked) {
      let last = '';
      const memo = await eventually(async () => {
        const res = await api<Memo>('GET', `/api/v1/memo/${w.memoUuid}`);
        last = `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
        if (res.status === 404) return 'missing' as const;
        return res.status === 200 && !res.body.pending ? res.body : undefined;
      }, 60_000, 100).catch(() => 'unprocessed' as const);
      if (memo === 'missing') {
        missing.push(w.token);
        continue;
      }
      if (memo === 'unprocessed') {
        unprocessed.push(`${w.token} ${w.memoUuid}: ${last}`);
        continue;
      }
      const byTitle = await api<{ results: SearchResultItem[] }>('POST', '/api/v1/search', { query: w.token, search_method: 'title_contains', limit: 50 });
      const uuids = new Set(byTitle.body.results.map((r) => r.memo_uuid));
      if (uuids.size !== 1 || !uuids.has(w.memoUuid!)) duplicated.push(`${w.token}: ${[...uuids].join(',')}`);
      const byText = await api<{ results: SearchResultItem[] }>('POST', '/api/v1/search', { query: w.token, search_method: 'chunk_vector_search', limit: 5 });
      if (byText.body.results[0]?.memo_uuid !== w.memoUuid) unsearchable.push(w.token);
    }
    console.log(`acknowledged ${acked.length}; found ${acked.length - missing.length}; unprocessed ${unprocessed.length}; duplicated ${duplicated.length}; unsearchable ${unsearchable.length}`);
    if (unprocessed.length > 0) console.log(`services' warnings and errors:\n${stack.output().slice(-20_000)}`);
    expect(unprocessed, 'acknowledged writes still unprocessed after 60 s').toEqual([]);
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(unsearchable).toEqual([]);
    expect(stack.output()).toMatch(/nats-server exited \(SIGKILL\); restarting it in \d+ ms/);
  }, 300_000);
});
