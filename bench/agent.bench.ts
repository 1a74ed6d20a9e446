/**
 * Agent streaming, on the stack as `pnpm start` runs it (HTTPS gateway → NATS → agent):
 *  1. time to first token of a streamed chat, p50/p99, beside calling the provider in-process with
 *     the same passages (the difference is retrieval + gateway + NATS);
 *  2. concurrent SSE streams one gateway holds (default 200), with the gateway's memory per stream.
 *     For (2) the agent talks to a scripted Ollama peer that streams slowly, so every stream stays open.
 *
 *   tsx bench/agent.bench.ts [--requests 200] [--streams 200]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:https';
import { parseArgs } from 'node:util';
import { ExtractiveProvider } from '@memex/agent/llm/extractive';
import type { Passage } from '@memex/agent/llm/port';
import { startOllamaPeer } from '@memex/agent/testing/ollamaPeer';
import type { Memo } from '@memex/contracts';
import { httpsJson } from '../test/support/https';
import { startProcessStack, type ProcessStack } from '../test/support/processStack';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '200' }, streams: { type: 'string', default: '200' } } });
const REQUESTS = Number(values.requests);
const STREAMS = Number(values.streams);

const MEMOS = [
  ['Harbour operations', 'Container ships are unloaded by gantry cranes at the harbour. Each crane moves thirty containers an hour.'],
  ['Crane maintenance', 'The gantry cranes need new cables next spring, which costs forty thousand euros.'],
  ['Truck logistics', 'Trucks carry containers from the harbour to inland depots. Traffic peaks in the morning.'],
];
const QUESTION = 'How many containers does a gantry crane move an hour?';

/** Opens a streamed chat; resolves with the time to the first token event and when the stream ends. */
function streamChat(stack: ProcessStack, body: unknown): Promise<{ firstTokenMs: number; done: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const started = performance.now();
    const req = request(`${stack.base}/api/v1/chat`, {
      method: 'POST',
      agent: stack.agent,
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    req.on('response', (res) => {
      let buffered = '';
      let first = false;
      let tokens = 0;
      const done = new Promise<number>((resolveDone, rejectDone) => {
        res.on('end', () => resolveDone(tokens));
        res.on('error', rejectDone);
      });
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const found = buffered.match(/"type":"token"/g)?.length ?? 0;
        tokens = found;
        if (!first && found > 0) {
          first = true;
          resolve({ firstTokenMs: performance.now() - started, done });
        }
        if (buffered.length > 1 << 20) buffered = buffered.slice(-1024);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function rssOf(pattern: string): number {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(pattern)) {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
      }
    } catch {
      // The process went away between listing and reading.
    }
  }
  throw new Error(`no process matching ${pattern}`);
}

async function seed(stack: ProcessStack): Promise<void> {
  for (const [title, content] of MEMOS) {
    const res = await httpsJson<{ memo_uuid: string }>('POST', `${stack.base}/api/v1/memo`, { key: stack.key, agent: stack.agent, body: { title, content } });
    for (;;) {
      const memo = await httpsJson<Memo>('GET', `${stack.base}/api/v1/memo/${res.body.memo_uuid}`, { key: stack.key, agent: stack.agent });
      if (!memo.body.pending) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

// 1. Time to first token, built-in provider.
{
  const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0' });
  try {
    await seed(stack);
    const viaStack: number[] = [];
    for (let i = 0; i < REQUESTS + 10; i++) {
      const { firstTokenMs, done } = await streamChat(stack, { query: QUESTION, stream: true });
      await done;
      if (i >= 10) viaStack.push(firstTokenMs);
    }
    const provider = new ExtractiveProvider();
    const passages: Passage[] = MEMOS.map(([title, content], i) => ({ n: i + 1, memoId: `m${i}`, memoTitle: title!, chunkId: `c${i}`, content: content!, distance: 0.1 }));
    const inProcess: number[] = [];
    for (let i = 0; i < REQUESTS + 10; i++) {
      const started = performance.now();
      let first = 0;
      await provider.answer(
        { kind: 'chat', input: QUESTION, history: [], passages, search: async () => [] },
        async () => {
          if (first === 0) first = performance.now() - started;
        },
        new AbortController().signal,
      );
      if (i >= 10) inProcess.push(first);
    }
    const p = (xs: number[], q: number) => percentile(xs, q).toFixed(2);
    printTable(`time to first token, streamed chat, ${REQUESTS} sequential requests`, [
      ['through gateway + NATS (HTTPS, retrieval included)', `p50 ${p(viaStack, 50)} ms   p99 ${p(viaStack, 99)} ms`],
      ['provider in-process (same passages)', `p50 ${p(inProcess, 50)} ms   p99 ${p(inProcess, 99)} ms`],
      ['overhead', `p50 ${(percentile(viaStack, 50) - percentile(inProcess, 50)).toFixed(2)} ms   p99 ${(percentile(viaStack, 99) - percentile(inProcess, 99)).toFixed(2)} ms`],
    ]);
  } finally {
    await stack.stop();
  }
}

// 2. Concurrent streams held by one gateway, answers from a slow scripted Ollama.
{
  const peer = await startOllamaPeer();
  const TOKENS = 100;
  const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', OLLAMA_HOST: peer.url, OLLAMA_MODEL: 'llama3.1:8b' });
  try {
    for (let i = 0; i < STREAMS; i++) peer.script(Array.from({ length: TOKENS }, (_, t) => ({ content: `token${t} `, delayMs: 100 })));
    const idleRss = rssOf('services/gateway/src/main.ts');
    const opened = await Promise.all(Array.from({ length: STREAMS }, () => streamChat(stack, { query: 'Tell me a long story', stream: true })));
    await new Promise((r) => setTimeout(r, 1_000));
    const busyRss = rssOf('services/gateway/src/main.ts');
    const tokenCounts = await Promise.all(opened.map((o) => o.done));
    const complete = tokenCounts.filter((n) => n === TOKENS).length;
    printTable(`${STREAMS} concurrent SSE streams on one gateway (${TOKENS} tokens each, 100 ms apart)`, [
      ['streams that received every token', `${complete} of ${STREAMS}`],
      ['first token, p50 / p99', `${percentile(opened.map((o) => o.firstTokenMs), 50).toFixed(0)} ms / ${percentile(opened.map((o) => o.firstTokenMs), 99).toFixed(0)} ms`],
      ['gateway RSS idle → with all streams open', `${(idleRss / 2 ** 20).toFixed(1)} MiB → ${(busyRss / 2 ** 20).toFixed(1)} MiB`],
      ['memory per open stream', `${((busyRss - idleRss) / STREAMS / 1024).toFixed(1)} KiB`],
    ]);
  } finally {
    await stack.stop();
    await peer.close();
  }
}
