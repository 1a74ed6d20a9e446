/**
 * The whole stack with `LLM_PROVIDER=openai` and `OPENAI_BASE_URL` only, against a scripted
 * OpenAI-compatible peer: summaries and tags, chat (streamed and not) and generate go through it,
 * the prompt it receives carries the retrieved memo text, and a client that disconnects mid-stream
 * closes the upstream request.
 */
import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '@memex/contracts';
import { eventually, startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { memoApi } from '../support/api';
import { startStack, type Stack } from '../support/stack';

function openStream(port: number, key: string, path: string, body: unknown): Promise<{ res: IncomingMessage; close(): void }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => resolve({ res, close: () => req.destroy() }),
    );
    req.on('error', () => undefined);
    req.once('error', reject);
    req.end(payload);
  });
}

const events = (body: string) =>
  body
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => JSON.parse(b.slice(6)) as StreamEvent);

const HARBOUR = 'Container ships are unloaded by gantry cranes at the harbour. Each crane moves thirty containers an hour.';

describe('LLM_PROVIDER=openai through the whole stack', () => {
  let peer: OpenAiPeer;
  let stack: Stack;
  let port: number;
  let key: string;
  let memoId: string;

  beforeAll(async () => {
    peer = await startOpenAiPeer({ models: ['peer-chat-model'] });
    stack = await startStack({ env: { LLM_PROVIDER: 'openai', OPENAI_BASE_URL: peer.url, MEMEX_RATE_LIMIT: '0' } });
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    port = (stack.app.server.address() as AddressInfo).port;
    ({ key } = await stack.project());
    peer.script([{ content: JSON.stringify({ summary: 'How the harbour unloads ships with gantry cranes.', tags: ['Harbour', 'Cranes', 'logistics'] }) }]);
    memoId = await memoApi(stack.app, key).create({ title: 'Harbour operations', content: HARBOUR });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await peer?.close();
  });

  const inject = (url: string, payload: Record<string, unknown>) => stack.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });
  const lastUserMessage = () => peer.chatBodies().at(-1).messages.at(-1).content as string;

  it('summarizes and tags memos through the server, with the first listed model', async () => {
    const memo = await memoApi(stack.app, key).processed(memoId, 20_000);
    expect(memo.summary).toBe('How the harbour unloads ships with gantry cranes.');
    expect(memo.tags.map((t) => t.tag)).toEqual(['harbour', 'cranes', 'logistics']);
    const summaryCall = peer.chatBodies()[0];
    expect(summaryCall.model).toBe('peer-chat-model');
    expect(summaryCall.messages[1].content).toContain(HARBOUR);
  });

  it('answers a chat with what the server says; the prompt carries the retrieved memo text', async () => {
    peer.script([{ content: 'Thirty containers ' }, { content: 'an hour [1].' }]);
    const res = await inject('/api/v1/chat', { query: 'How many containers does a crane move an hour?' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().response).toBe('Thirty containers an hour [1].');
    expect(res.json().citations[0]).toMatchObject({ index: 1, memo_uuid: memoId });
    expect(lastUserMessage()).toContain(HARBOUR);
    expect(lastUserMessage()).toContain('Question: How many containers does a crane move an hour?');
  });

  it('streams a chat token by token, then done with the chat id', async () => {
    peer.script([{ content: 'Gantry ' }, { content: 'cranes [1].' }]);
    const res = await inject('/api/v1/chat', { query: 'What unloads the ships?', stream: true });
    expect(res.statusCode).toBe(200);
    const stream = events(res.body);
    expect(stream.filter((e) => e.type === 'token').map((e) => (e as { content: string }).content)).toEqual(['Gantry ', 'cranes [1].']);
    expect(stream.at(-1)).toMatchObject({ type: 'done', chat_id: expect.any(String) });
    expect(lastUserMessage()).toContain(HARBOUR);
  });

  it('generates a document, streamed and not', async () => {
    peer.script([{ content: '# Harbour\n\nCranes move thirty containers an hour [1].' }]);
    const res = await inject('/api/v1/generate', { prompt: 'Write a note on harbour cranes', rules: 'One paragraph.' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().response).toBe('# Harbour\n\nCranes move thirty containers an hour [1].');
    const body = peer.chatBodies().at(-1);
    expect(body.messages[0].content).toMatch(/Markdown document/);
    expect(body.messages.at(-1).content).toContain(HARBOUR);

    peer.script([{ content: '# Doc' }, { content: '\n\nText [1].' }]);
    const streamed = await inject('/api/v1/generate', { prompt: 'Write a note on harbour cranes', stream: true });
    const stream = events(streamed.body);
    expect(stream.filter((e) => e.type === 'token').map((e) => (e as { content: string }).content).join('')).toBe('# Doc\n\nText [1].');
    expect(stream.at(-1)?.type).toBe('done');
  });

  it('a client that disconnects mid-stream closes the upstream request within a second', async () => {
    peer.script(Array.from({ length: 400 }, (_, i) => ({ content: `word${i} `, delayMs: 25 })));
    const { res, close } = await openStream(port, key, '/api/v1/chat', { query: 'Tell me a long story about cranes', stream: true });
    expect(res.statusCode).toBe(200);
    let received = '';
    await new Promise<void>((resolve) => {
      res.on('data', (chunk: Buffer) => {
        received += chunk.toString();
        if ((received.match(/"type":"token"/g) ?? []).length >= 5) resolve();
      });
    });
    const upstream = peer.requests.find((r) => r.path === '/v1/chat/completions' && r.closedAt === undefined)!;
    expect(upstream).toBeDefined();
    const leftAt = Date.now();
    close();
    await eventually(() => upstream.closedAt !== undefined, 5_000, 10);
    expect(upstream.abandoned).toBe(true);
    expect(upstream.closedAt! - leftAt).toBeLessThan(1_000);
  });

  it('turns a server failure into 500 Agent error with its message, after retries', async () => {
    peer.script({ status: 503, error: 'overloaded' }, { status: 503, error: 'overloaded' }, { status: 503, error: 'overloaded' });
    const res = await inject('/api/v1/chat', { query: 'hi' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toMatch(/^Agent error: .*503 overloaded/);
  });
});
