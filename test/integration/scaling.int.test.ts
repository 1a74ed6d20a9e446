/**
 * Two instances each of gateway, memo, indexer and agent (`pnpm start --scale`), on real NATS, as
 * separate processes: the work is shared between instances, nothing is processed twice, and when an
 * indexer is killed the other one takes its work over.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Consumers, Streams, type Memo } from '@memex/contracts';
import { collectMetrics } from '@memex/runtime';
import { eventually, freePort } from '@memex/testing';
import { httpsJson } from '../support/https';
import { counter, operatorMetrics } from '../support/metrics';
import { startProcessStack, type ProcessStack } from '../support/processStack';

/** Child processes of `parent` whose command line runs `entry`. */
function pidsOf(parent: number, entry: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(entry);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe('scaled out: two gateways, memo services, indexers and agents', () => {
  let stack: ProcessStack;
  let nc: Awaited<ReturnType<typeof connect>>;
  const ids: string[] = [];
  let operatorPort: number;

  beforeAll(async () => {
    operatorPort = await freePort();
    stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', MEMEX_HEALTH_PORT: String(operatorPort) }, ['--scale', 'gateway=2,indexer=2,agent=2,memo=2', '--no-restart']);
    nc = await connect({ servers: stack.natsUrl });
  }, 180_000);
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
  });

  const gateways = () => [stack.base, `https://localhost:${stack.port + 1}`];
  async function ingest(count: number, offset: number): Promise<string[]> {
    const created: string[] = [];
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const base = gateways()[i % 2]!;
        const res = await httpsJson<{ memo_uuid: string }>('POST', `${base}/api/v1/memo`, {
          key: stack.key,
          agent: stack.agent,
          body: { title: `Memo ${offset + i}`, content: `Report ${offset + i} on lighthouses, fog horns and coastal shipping lanes. It has a second sentence.` },
        });
        expect(res.status, res.text).toBe(200);
        created.push(res.body.memo_uuid);
      }),
    );
    return created;
  }
  async function allProcessed(memoIds: string[]): Promise<void> {
    for (const id of memoIds) {
      await eventually(async () => {
        const res = await httpsJson<Memo>('GET', `${gateways()[0]}/api/v1/memo/${id}`, { key: stack.key, agent: stack.agent });
        return res.status === 200 && !res.body.pending;
      }, 90_000, 50);
    }
  }

  it("serves every process's metrics, its event loop's among them, on each gateway's operator port (MEMEX_HEALTH_PORT, +1)", async () => {
    for (const port of [operatorPort, operatorPort + 1]) {
      const text = await operatorMetrics(port, 9);
      for (const service of ['gateway', 'memo', 'indexer', 'agent', 'extractor']) {
        expect(text).toMatch(new RegExp(`memex_event_loop_delay_seconds_count\\{service="${service}",instance="[^"]+"\\} \\d+`));
        expect(text).toMatch(new RegExp(`memex_event_loop_busy_seconds_total\\{service="${service}",instance="[^"]+"\\} [\\d.e-]+`));
      }
      // Both instances of each scaled service answered (their ids differ).
      for (const service of ['gateway', 'memo', 'indexer', 'agent']) {
        const instances = new Set([...text.matchAll(new RegExp(`memex_event_loop_delay_seconds_count\\{service="${service}",instance="([^"]+)"\\}`, 'g'))].map((m) => m[1]));
        expect(instances.size, service).toBe(2);
      }
    }
  });

  it('shares the work between instances and processes each memo once', async () => {
    const instances = await eventually(async () => {
      const all = await collectMetrics(nc, ['gateway', 'indexer', 'agent', 'memo']);
      const count = (s: string) => all.filter((i) => i.service === s).length;
      return count('gateway') === 2 && count('indexer') === 2 && count('agent') === 2 && count('memo') === 2 ? all : undefined;
    }, 30_000, 200);
    expect(instances).toHaveLength(8);

    ids.push(...(await ingest(200, 0)));
    await allProcessed(ids);

    const metrics = await collectMetrics(nc, ['gateway', 'indexer', 'agent', 'memo']);
    const indexed = counter(metrics, 'indexer', 'memex_revisions_indexed_total');
    expect(indexed.size).toBe(2);
    for (const n of indexed.values()) expect(n).toBeGreaterThan(0);
    expect(sum(indexed)).toBe(200);
    const summarized = counter(metrics, 'agent', 'memex_consumer_messages_total', { consumer: 'agent', outcome: 'ack' });
    for (const n of summarized.values()) expect(n).toBeGreaterThan(0);
    const served = counter(metrics, 'gateway', 'memex_http_requests_total', { route: '/api/v1/memo' });
    expect(served.size).toBe(2);
    for (const n of served.values()) expect(n).toBe(100);
    // Every summary recorded once: exactly one record-summary per memo reached the memo services,
    // which shared the commands (two processes on one SQLite file).
    expect(sum(counter(metrics, 'memo', 'memex_commands_total', { command: 'record-summary', outcome: 'ok' }))).toBe(200);
    // Concurrent POSTs share create-batch commands: count the memos created, not the commands.
    const creates = counter(metrics, 'memo', 'memex_events_published_total', { type: 'MemoCreated' });
    expect(sum(creates)).toBe(200);
    for (const n of creates.values()) expect(n).toBeGreaterThan(0);

    const jsm = await jetstreamManager(nc);
    for (const consumer of [Consumers.indexer, Consumers.agent, Consumers.indexerCatalog]) {
      const info = await jsm.consumers.info(Streams.memoEvents, consumer);
      expect(info.num_redelivered, consumer).toBe(0);
      expect(info.num_pending + info.num_ack_pending, consumer).toBe(0);
    }
  }, 180_000);

  it('lets the surviving indexer take over a killed one\'s work', async () => {
    const [victim, survivor] = pidsOf(stack.process.pid!, '/indexer.mjs');
    expect(victim).toBeDefined();
    expect(survivor).toBeDefined();
    const batch = ingest(300, 1000);
    await new Promise((r) => setTimeout(r, 300));
    process.kill(victim!, 'SIGKILL');
    const created = await batch;
    await allProcessed(created);

    const metrics = await collectMetrics(nc, ['indexer']);
    const indexed = counter(metrics, 'indexer', 'memex_revisions_indexed_total');
    expect(indexed.size).toBe(1);
    expect(pidsOf(stack.process.pid!, '/indexer.mjs')).toEqual([survivor]);
    const search = await httpsJson<{ results: { memo_uuid: string }[] }>('POST', `${gateways()[1]}/api/v1/search`, {
      key: stack.key,
      agent: stack.agent,
      body: { query: 'lighthouses fog horns', search_method: 'chunk_vector_search', limit: 50 },
    });
    expect(search.status).toBe(200);
    expect(search.body.results.length).toBe(50);
  }, 180_000);
});
