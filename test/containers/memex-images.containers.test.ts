/**
 * The per-service Memex images, composed by @memex/testcontainers' MemexStack (NATS and one
 * container per service on a private network, embedded stores): they run compiled JavaScript as
 * uid 10001, count the CPU their quota allows (`resources`), serve the user's path over HTTPS, and
 * lose no acknowledged write when a service's container is killed (SIGKILL) and started again while
 * clients keep writing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemexStack, type StartedMemexStack } from '@memex/testcontainers';
import { eventually } from '@memex/testing';
import { imageTag, LOCAL_NATS } from '../../deploy/images';
import { SERVICE_NAMES } from '../../deploy/services';
import { describeWithImages } from './support/docker';
import { httpsApi, memoSearchChatFlow, type Api } from './support/flow';

const IMAGES = [...SERVICE_NAMES.map(imageTag), LOCAL_NATS];

describeWithImages('the Memex service images (MemexStack)', IMAGES, () => {
  let stack: StartedMemexStack;
  let api: Api;

  beforeAll(async () => {
    // The indexer limited to one core's worth of CPU time on this 2-core (or larger) machine.
    stack = await new MemexStack({ natsImage: LOCAL_NATS, resources: { indexer: { cpu: 1 } } }).start();
    api = httpsApi(stack.baseUrl, stack.caCertificate);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('run compiled JavaScript as uid 10001, no TypeScript loader', async () => {
    for (const name of SERVICE_NAMES) {
      const c = stack.service(name);
      const id = await c.exec(['id', '-u']);
      expect(id.stdout.trim(), name).toBe('10001');
      const cmdline = await c.exec(['cat', '/proc/1/cmdline']);
      expect(cmdline.stdout.replace(/\0/g, ' '), name).toMatch(new RegExp(`node .*/app/dist/${name}\\.mjs`));
      const tsx = await c.exec(['sh', '-c', 'ls /app/node_modules/tsx /app/node_modules/typescript 2>&1 || true']);
      expect(tsx.stdout, name).toMatch(/No such file/);
    }
  });

  it('count the cores their CPU quota allows, not the host\'s (the indexer\'s scan thread depends on it)', async () => {
    const host = Number(await stack.service('gateway').exec(['nproc']).then((r) => r.stdout.trim()));
    expect(host).toBeGreaterThanOrEqual(2);
    // nproc counts the cpuset, which a CPU quota leaves whole: the indexer's own reading says 1
    expect(Number((await stack.service('indexer').exec(['nproc'])).stdout.trim())).toBe(host);
    const metrics = await eventually(async () => {
      const text = await stack.metrics();
      return /^memex_indexer_cpu_cores\{/m.test(text) ? text : undefined;
    }, 10_000);
    expect(metrics).toMatch(/^memex_indexer_cpu_cores\{[^}]*\} 1$/m);
  });

  it('store, process, find and discuss a memo over HTTPS', async () => {
    await memoSearchChatFlow(api, stack.apiKey, { expectCitation: true, processingTimeoutMs: 120_000 });
  });

  it.each(['memo', 'indexer'])('lose no acknowledged write when %s is killed and restarted during writes', async (service) => {
    const acknowledged: string[] = [];
    let failed = 0;
    let writing = true;
    const writer = async () => {
      while (writing) {
        const reference = `kill-${service}-${randomUUID()}`;
        const r = await stack.api<{ memo_uuid?: string }>('POST', '/api/v1/memo', { title: `Kill test ${reference}`, content: `Written while ${service} restarts.`, reference_id: reference }).catch(() => undefined);
        if (r?.status === 200 && r.body.memo_uuid) acknowledged.push(r.body.memo_uuid);
        else failed++;
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    await eventually(async () => acknowledged.length >= 20, 30_000, 100);
    // SIGKILL, then the same container (and volume) started again.
    await stack.service(service).restart({ timeout: 0 });
    const before = acknowledged.length;
    await eventually(async () => acknowledged.length >= before + 20, 120_000, 200);
    writing = false;
    await Promise.all(writers);

    const missing: string[] = [];
    await eventually(
      async () => {
        missing.length = 0;
        for (const id of acknowledged) {
          const r = await stack.api<{ pending: boolean }>('GET', `/api/v1/memo/${id}`);
          if (r.status !== 200 || r.body.pending) missing.push(`${id}: ${r.status}`);
        }
        return missing.length === 0;
      },
      120_000,
      1000,
    ).catch(() => undefined);
    expect(missing, `${missing.length} of ${acknowledged.length} acknowledged writes missing or unprocessed (${failed} refused during the restart)`).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(40);
  });
});
