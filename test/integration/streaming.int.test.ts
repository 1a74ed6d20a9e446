/**
 * Streaming through gateway, NATS and agent to an LLM: a client that disconnects mid-stream cancels
 * the upstream (Ollama) request within a second, and a client that stops reading holds generation
 * back instead of making the gateway buffer.
 */
import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnswerRequest, AnswerResult, TokenSink } from '@memex/agent/llm/port';
import { ExtractiveProvider } from '@memex/agent/llm/extractive';
import { startOllamaPeer, type OllamaPeer } from '@memex/agent/testing/ollamaPeer';
import { eventually } from '@memex/testing';
import { startStack, type Stack } from '../support/stack';

/** Opens a streamed chat and resolves once the response headers are in. */
function openStream(port: number, key: string, body: unknown): Promise<{ res: IncomingMessage; close(): void }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, path: '/api/v1/chat', method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => resolve({ res, close: () => req.destroy() }),
    );
    req.on('error', () => undefined);
    req.once('error', reject);
    req.end(payload);
  });
}

describe('a disconnect mid-stream cancels the upstream Ollama request', () => {
  let peer: OllamaPeer;
  let stack: Stack;
  let port: number;
  let key: string;

  beforeAll(async () => {
    peer = await startOllamaPeer();
    stack = await startStack({ env: { OLLAMA_HOST: peer.url, OLLAMA_MODEL: 'llama3.1:8b', MEMEX_RATE_LIMIT: '0' } });
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    port = (stack.app.server.address() as AddressInfo).port;
    ({ key } = await stack.project());
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await peer?.close();
  });

  it('closes the upstream request within 1 s of the client leaving', async () => {
    // A long, slow answer: 400 tokens, 25 ms apart.
    peer.script(Array.from({ length: 400 }, (_, i) => ({ content: `word${i} `, delayMs: 25 })));
    const { res, close } = await openStream(port, key, { query: 'Tell me a long story', stream: true });
    expect(res.statusCode).toBe(200);
    let received = '';
    await new Promise<void>((resolve) => {
      res.on('data', (chunk: Buffer) => {
        received += chunk.toString();
        if ((received.match(/"type":"token"/g) ?? []).length >= 5) resolve();
      });
    });
    await eventually(() => peer.openRequests === 1, 2_000);
    const chat = peer.requests.find((r) => r.path === '/api/chat' && r.closedAt === undefined)!;
    const leftAt = Date.now();
    close();
    await eventually(() => peer.openRequests === 0, 5_000, 10);
    expect(chat.abandoned).toBe(true);
    expect(chat.closedAt! - leftAt).toBeLessThan(1_000);
  });

  it('streams what Ollama says, token by token, then done', async () => {
    peer.script([{ content: 'Hello ' }, { content: 'from ' }, { content: 'Ollama.' }]);
    const res = await stack.app.inject({ method: 'POST', url: '/api/v1/chat', headers: { authorization: `Bearer ${key}` }, payload: { query: 'hi', stream: true } });
    const events = res.body.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => JSON.parse(b.slice(6)) as { type: string; content?: string });
    expect(events.filter((e) => e.type === 'token').map((e) => e.content)).toEqual(['Hello ', 'from ', 'Ollama.']);
    const done = events.at(-1) as { type: string; chat_id?: string };
    expect(done.type).toBe('done');
    // The chat the done event names is stored.
    const chat = await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${done.chat_id}`, headers: { authorization: `Bearer ${key}` } });
    expect(chat.statusCode, chat.body).toBe(200);
    expect(chat.json().messages.at(-1).content).toBe('Hello from Ollama.');
  });

  it('turns an Ollama failure into 500 Agent error with its message', async () => {
    peer.script({ status: 500, error: 'model runner crashed' });
    const res = await stack.app.inject({ method: 'POST', url: '/api/v1/chat', headers: { authorization: `Bearer ${key}` }, payload: { query: 'hi' } });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toMatch(/^Agent error: .*model runner crashed/);
  });
});

/** Emits big tokens as fast as the stream takes them, counting how many it got out. */
class FirehoseProvider extends ExtractiveProvider {
  emitted = 0;
  override async answer(_request: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> {
    const token = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 5_000 && !signal.aborted; i++) {
      await onToken(token);
      this.emitted += 1;
    }
    return { text: '', steps: [], passages: [] };
  }
}

describe('a client that stops reading', () => {
  let stack: Stack;
  let port: number;
  let key: string;
  const provider = new FirehoseProvider();

  beforeAll(async () => {
    stack = await startStack({ agent: { llm: provider }, env: { MEMEX_RATE_LIMIT: '0' } });
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    port = (stack.app.server.address() as AddressInfo).port;
    ({ key } = await stack.project());
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('holds generation back to what the socket and the window take, and resumes when it reads', async () => {
    const { res, close } = await openStream(port, key, { query: 'flood me', stream: true });
    res.pause();
    // Let the pipeline fill: kernel socket buffers, the gateway's one pending write, the stream window.
    await new Promise((r) => setTimeout(r, 1_500));
    const stalledAt = provider.emitted;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(provider.emitted).toBe(stalledAt);
    expect(stalledAt).toBeLessThan(1_000);
    let bytes = 0;
    res.on('data', (chunk: Buffer) => (bytes += chunk.length));
    res.resume();
    await eventually(() => provider.emitted > stalledAt + 100, 10_000);
    close();
    expect(bytes).toBeGreaterThan(0);
  });
});

describe('an agent that stops mid-answer', () => {
  it('ends the stream with an error event and done instead of leaving the client waiting', async () => {
    const slow = new (class extends ExtractiveProvider {
      override async answer(_r: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> {
        for (let i = 0; i < 1_000 && !signal.aborted; i++) {
          await onToken(`t${i} `);
          await new Promise((r) => setTimeout(r, 10));
        }
        if (signal.aborted) throw signal.reason;
        return { text: '', steps: [], passages: [] };
      }
    })();
    const stack = await startStack({ agent: { llm: slow }, env: { MEMEX_RATE_LIMIT: '0' } });
    try {
      await stack.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (stack.app.server.address() as AddressInfo).port;
      const { key } = await stack.project();
      const { res } = await openStream(port, key, { query: 'go on', stream: true });
      let body = '';
      const ended = new Promise<void>((resolve) => res.on('end', () => resolve()));
      res.on('data', (c: Buffer) => (body += c.toString()));
      await eventually(() => body.includes('"type":"token"'), 5_000);
      await stack.agent.stop();
      await ended;
      const events = body.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => JSON.parse(b.slice(6)) as { type: string; content?: string });
      expect(events.at(-2)).toEqual({
        type: 'error',
        error: 'Agent error: the agent stopped before the answer was complete; ask again',
        content: 'Agent error: the agent stopped before the answer was complete; ask again',
      });
      // The answer never completed, so no chat was stored: done must not name one.
      expect(events.at(-1)).toEqual({ type: 'done' });
    } finally {
      await stack.stop().catch(() => undefined);
    }
  });

  it('names in done only a chat that is stored: the continued one, never a new one whose answer failed', async () => {
    let calls = 0;
    const flaky = new (class extends ExtractiveProvider {
      override async answer(r: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> {
        if (++calls > 1) {
          await onToken('partial ');
          throw new Error('the model fell over');
        }
        return super.answer(r, onToken, signal);
      }
    })();
    const stack = await startStack({ agent: { llm: flaky }, env: { MEMEX_RATE_LIMIT: '0' } });
    try {
      const { key } = await stack.project();
      const headers = { authorization: `Bearer ${key}` };
      const first = await stack.app.inject({ method: 'POST', url: '/api/v1/chat', headers, payload: { query: 'hello' } });
      expect(first.statusCode, first.body).toBe(200);
      const chatId = first.json().chat_id as string;
      const events = async (payload: object) => {
        const res = await stack.app.inject({ method: 'POST', url: '/api/v1/chat', headers, payload });
        return res.body.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => JSON.parse(b.slice(6)) as { type: string; chat_id?: string });
      };
      const continued = await events({ query: 'more', chat_id: chatId, stream: true });
      expect(continued.at(-2)?.type).toBe('error');
      expect(continued.at(-1)).toEqual({ type: 'done', chat_id: chatId });
      expect((await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${chatId}`, headers })).statusCode).toBe(200);
      const fresh = await events({ query: 'new topic', stream: true });
      expect(fresh.at(-2)?.type).toBe('error');
      expect(fresh.at(-1)).toEqual({ type: 'done' });
    } finally {
      await stack.stop().catch(() => undefined);
    }
  });
});
