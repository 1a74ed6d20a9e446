/**
 * GET and POST /api/v1/memo through the whole stack (HTTPS gateway → NATS → memo service, as
 * `pnpm start` runs it), 50 connections, beside a bare Fastify HTTPS hello-world measured in the same
 * run on the same machine, and their ratio.
 *
 *   tsx bench/http.bench.ts [--duration 10] [--connections 50]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, waitForPort } from '@memex/testing';
import { httpsJson } from '../test/support/https';
import { exited, spawnTs } from '../test/support/processes';
import { startProcessStack } from '../test/support/processStack';
import { formatLoad, load } from './support/load';
import { printTable } from './support/stats';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } } });
const durationS = Number(values.duration);
const connections = Number(values.connections);

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', LOG_LEVEL: 'warn' });
const helloPort = await freePort();
const hello = spawnTs('bench/support/hello.ts', [String(helloPort), join(stack.dataDir, 'tls', 'cert.pem'), join(stack.dataDir, 'tls', 'key.pem')], {});
try {
  await waitForPort(helloPort);
  const auth = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' };
  const created = await httpsJson<{ memo_uuid: string }>('POST', `${stack.base}/api/v1/memo`, {
    key: stack.key,
    ca: stack.ca,
    body: { title: 'Benchmark memo', content: 'A memo read over and over by the benchmark.' },
  });
  const memoUrl = `${stack.base}/api/v1/memo/${created.body.memo_uuid}`;

  const baseline = await load('Fastify HTTPS hello-world', { url: `https://localhost:${helloPort}/`, connections, durationS });
  const get = await load('GET /api/v1/memo/{id}', { url: memoUrl, headers: auth, connections, durationS });
  const post = await load('POST /api/v1/memo', {
    url: `${stack.base}/api/v1/memo`,
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ title: 'Load', content: 'Created under load by the HTTP benchmark. It has two sentences.' }),
    connections,
    durationS,
  });
  printTable(`HTTPS, ${connections} connections, ${durationS} s each (2 cores shared by the load generator and every process)`, [
    [baseline.label, formatLoad(baseline)],
    [get.label, `${formatLoad(get)}   = ${((get.requestsPerSecond / baseline.requestsPerSecond) * 100).toFixed(1)}% of hello-world`],
    [post.label, `${formatLoad(post)}   = ${((post.requestsPerSecond / baseline.requestsPerSecond) * 100).toFixed(1)}% of hello-world`],
  ]);
} finally {
  hello.kill('SIGTERM');
  await exited(hello);
  await stack.stop();
}
