/**
 * `pnpm start --single-process`: every service in one Node process. A memo goes through processing
 * and search as with separate processes; exactly one service process runs (beside nats-server and
 * the extractor's sandbox children); --scale with it is refused.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, SearchResultItem } from '@memex/contracts';
import { eventually, freePort } from '@memex/testing';
import { httpsJson } from '../support/https';
import { operatorMetrics } from '../support/metrics';
import { runTs } from '../support/processes';
import { startProcessStack, type ProcessStack } from '../support/processStack';

/** Command lines of the processes under `root` (Linux /proc). */
function descendants(root: number): string[] {
  const parent = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  const under = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...parent.keys()].filter(under).map((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      return '';
    }
  });
}

describe('pnpm start --single-process', () => {
  let stack: ProcessStack;
  let operatorPort: number;
  beforeAll(async () => {
    operatorPort = await freePort();
    stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', MEMEX_HEALTH_PORT: String(operatorPort) }, ['--single-process', '--no-restart']);
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('serves the whole API from one service process', async () => {
    const services = descendants(stack.process.pid!).filter((c) => /\.mjs|\/src\/main\.ts|allInOne/.test(c) && !c.includes('extractor-child'));
    expect(services).toHaveLength(1);
    expect(services[0]).toMatch(/all-in-one\.mjs|allInOne\.ts/);

    const call = <T>(method: string, url: string, body?: unknown) =>
      httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });
    const created = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', {
      title: 'Fog signals',
      content: 'Lighthouses sound fog signals when visibility drops. Keepers log every signal.',
    });
    expect(created.status, created.text).toBe(200);
    const memo = await eventually(async () => {
      const res = await call<Memo>('GET', `/api/v1/memo/${created.body.memo_uuid}`);
      return res.status === 200 && !res.body.pending ? res.body : undefined;
    }, 60_000);
    expect(memo.summary).not.toBe('');
    const found = await call<{ results: SearchResultItem[] }>('POST', '/api/v1/search', { query: 'fog signals', search_method: 'chunk_vector_search' });
    expect(found.status, found.text).toBe(200);
    expect(found.body.results.map((r) => r.memo_uuid)).toContain(created.body.memo_uuid);
  });

  it("serves every service's metrics on the one operator port (MEMEX_HEALTH_PORT), each with its event loop", async () => {
    const text = await operatorMetrics(operatorPort, 5);
    for (const service of ['gateway', 'memo', 'indexer', 'agent', 'extractor']) {
      expect(text).toMatch(new RegExp(`memex_event_loop_delay_seconds_count\\{service="${service}",instance="[^"]+"\\} \\d+`));
    }
    expect((await fetch(`http://127.0.0.1:${operatorPort}/readyz`)).status).toBe(200);
  });

  it('refuses --scale beside it', async () => {
    const run = await runTs('scripts/start.ts', ['--single-process', '--scale', 'gateway=2'], { MEMEX_DATA_DIR: stack.dataDir, NATS_URL: stack.natsUrl });
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/--single-process .* cannot be combined with --scale/);
  });
});
