import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAiPeer, type OpenAiPeer } from '@memex/testing';
import { contractRequest, llmChaosContract, llmContract } from './contract';
import { OpenAiError, OpenAiProvider, OpenAiTimeoutError, sseEvents, type OpenAiProviderOptions } from './openai';

const MODEL = 'test-model';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const never = () => new AbortController().signal;
const ignore = async () => undefined;

const options = (peer: OpenAiPeer, overrides: Partial<OpenAiProviderOptions> = {}): OpenAiProviderOptions => ({
  baseUrl: peer.url,
  model: MODEL,
  timeoutMs: 5_000,
  maxToolCalls: 2,
  tools: 'auto',
  maxRetries: 2,
  retryBaseMs: 10,
  ...overrides,
});

llmContract('OpenAI-compatible (scripted peer)', async () => {
  const peer = await startOpenAiPeer();
  return {
    provider: new OpenAiProvider(options(peer)),
    dispose: () => peer.close(),
    script(reply) {
      if (reply.kind === 'answer') peer.script(reply.tokens.map((content) => ({ content, delayMs: reply.delayMs })));
      else peer.script([{ content: JSON.stringify({ summary: reply.summary, tags: reply.tags }) }]);
    },
  };
});

llmChaosContract('OpenAI-compatible (chaos peer)', async () => {
  const peer = await startOpenAiPeer();
  return {
    provider: new OpenAiProvider(options(peer, { maxRetries: 0, timeoutMs: 2_000 })),
    chaos: (mode) => {
      peer.reset();
      peer.chaos(mode, { slowMs: 300 });
    },
    dispose: () => peer.close(),
  };
});

llmContract('OpenAI-compatible (scripted peer without tool support)', async () => {
  const peer = await startOpenAiPeer({ tools: false, jsonMode: false });
  return {
    provider: new OpenAiProvider(options(peer)),
    dispose: () => peer.close(),
    script(reply) {
      if (reply.kind === 'answer') peer.script(reply.tokens.map((content) => ({ content, delayMs: reply.delayMs })));
      else peer.script([{ content: '```json\n' + JSON.stringify({ summary: reply.summary, tags: reply.tags }) + '\n```' }]);
    },
  };
});

const realUrl = process.env.OPENAI_TEST_BASE_URL?.trim();
if (realUrl) {
  const model = process.env.OPENAI_TEST_MODEL?.trim() || MODEL;
  llmContract(
    `OpenAI-compatible (real server at ${realUrl}, ${model})`,
    async () => ({
      provider: new OpenAiProvider({
        baseUrl: realUrl,
        model,
        ...(process.env.OPENAI_TEST_API_KEY ? { apiKey: process.env.OPENAI_TEST_API_KEY } : {}),
        timeoutMs: 300_000,
        maxToolCalls: 2,
        tools: 'auto',
        maxRetries: 2,
      }),
      dispose: async () => undefined,
    }),
    { testTimeoutMs: 600_000 },
  );
} else {
  const reason = 'real OpenAI-compatible suite skipped: set OPENAI_TEST_BASE_URL (e.g. http://127.0.0.1:8000/v1) and OPENAI_TEST_MODEL';
  describe('LLM port contract: OpenAI-compatible (real server)', () => {
    it.skip(reason, () => {});
  });
  console.warn(reason);
}

describe('SSE parsing', () => {
  const body = (...parts: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
        controller.close();
      },
    });
  const all = async (stream: ReadableStream<Uint8Array>) => {
    const out: unknown[] = [];
    for await (const e of sseEvents(stream)) out.push(e);
    return out;
  };

  it('joins events split across chunks, skips comments, and stops at [DONE]', async () => {
    expect(await all(body('data: {"a":', '1}\n\n: keep-alive\n\nda', 'ta: {"b":2}\r\n\r\ndata: [DONE]\n\ndata: {"c":3}\n\n'))).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('reads a last event that lacks its blank line', async () => {
    expect(await all(body('data: {"a":1}\n\ndata: {"b":2}'))).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('joins a multi-line data field with newlines', async () => {
    expect(await all(body('data: {"a":\ndata: 1}\n\n'))).toEqual([{ a: 1 }]);
  });
});

describe('OpenAI-compatible provider against a scripted peer', () => {
  let peer: OpenAiPeer;
  const provider = (overrides: Partial<OpenAiProviderOptions> = {}) => new OpenAiProvider(options(peer, overrides));

  beforeEach(async () => {
    peer = await startOpenAiPeer({ apiKey: 'sk-test' });
  });
  afterEach(async () => {
    await peer.close();
  });

  it('sends model, stream, the API key, the search tool and the fenced passages', async () => {
    peer.script([{ content: 'Streams on disk [1].' }]);
    const result = await provider({ apiKey: 'sk-test' }).answer(contractRequest({ systemPrompt: 'Be brief.' }), ignore, never());
    expect(result.text).toBe('Streams on disk [1].');
    const [body] = peer.chatBodies();
    expect(body.model).toBe(MODEL);
    expect(body.stream).toBe(true);
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['search_memos']);
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'system', 'user']);
    expect(body.messages[2].content).toContain('<passage n="1" memo="NATS JetStream">\nJetStream stores messages in streams on disk.');
    expect(peer.requests[0]!.headers.authorization).toBe('Bearer sk-test');
  });

  it('runs a tool call: the search gets only the query, the reply goes back with the tool_call_id, and new passages continue the numbering', async () => {
    peer.script([{ toolCall: { name: 'search_memos', arguments: { query: 'backups', project_id: 'other' } } }], [{ content: 'Backups are nightly [3].' }]);
    const asked: string[] = [];
    const result = await provider({ apiKey: 'sk-test' }).answer(
      contractRequest({
        search: async (q) => {
          asked.push(q);
          return [{ n: 0, memoId: 'm3', memoTitle: 'Ops', chunkId: 'c3', content: 'Backups run nightly.', distance: 0.1 }];
        },
      }),
      ignore,
      never(),
    );
    expect(asked).toEqual(['backups']);
    expect(result.text).toBe('Backups are nightly [3].');
    expect(result.passages.map((p) => p.n)).toEqual([1, 2, 3]);
    expect(result.steps).toHaveLength(1);
    const second = peer.chatBodies()[1];
    const assistant = second.messages.at(-2);
    const tool = second.messages.at(-1);
    expect(assistant.tool_calls[0]).toMatchObject({ id: 'call_0', type: 'function', function: { name: 'search_memos' } });
    expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual({ query: 'backups', project_id: 'other' });
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: 'call_0' });
    expect(tool.content).toContain('<passage n="3" memo="Ops">\nBackups run nightly.');
  });

  it('falls back to retrieval-first answering when the server rejects tools, and remembers it', async () => {
    await peer.close();
    peer = await startOpenAiPeer({ tools: false });
    const p = provider();
    peer.script([{ content: 'From the passages [1].' }], [{ content: 'Again [2].' }]);
    expect((await p.answer(contractRequest(), ignore, never())).text).toBe('From the passages [1].');
    expect((await p.answer(contractRequest(), ignore, never())).text).toBe('Again [2].');
    const bodies = peer.chatBodies();
    expect(bodies.map((b) => Array.isArray(b.tools))).toEqual([true, false, false]);
    expect(bodies[1].messages[0].content).not.toMatch(/search_memos/);
    expect(bodies[1].messages.at(-1).content).toContain('<passage n="1"');
  });

  it('never offers tools with tools: off', async () => {
    peer.script([{ content: 'ok' }]);
    await provider({ apiKey: 'sk-test', tools: 'off' }).answer(contractRequest(), ignore, never());
    expect(peer.chatBodies()[0].tools).toBeUndefined();
  });

  it('retries 429 and 503 with backoff, honouring Retry-After, then answers', async () => {
    peer.script({ status: 429, error: 'slow down', retryAfter: '0' }, { status: 503, error: 'loading model' }, [{ content: 'Finally.' }]);
    const result = await provider({ apiKey: 'sk-test' }).answer(contractRequest(), ignore, never());
    expect(result.text).toBe('Finally.');
    expect(peer.chatBodies()).toHaveLength(3);
  });

  it('gives up after maxRetries with the server message', async () => {
    peer.script({ status: 500, error: 'boom' }, { status: 500, error: 'boom' }, { status: 500, error: 'boom' });
    const run = provider({ apiKey: 'sk-test' }).answer(contractRequest(), ignore, never());
    await expect(run).rejects.toBeInstanceOf(OpenAiError);
    await expect(run).rejects.toThrow(/500 boom/);
    expect(peer.chatBodies()).toHaveLength(3);
  });

  it('does not retry a 400, and reports a wrong key', async () => {
    peer.script({ status: 400, error: 'bad request: context too long' });
    await expect(provider({ apiKey: 'sk-test' }).answer(contractRequest(), ignore, never())).rejects.toThrow(/400 bad request: context too long/);
    expect(peer.chatBodies()).toHaveLength(1);
    await expect(provider({ apiKey: 'wrong' }).answer(contractRequest(), ignore, never())).rejects.toThrow(/401 invalid api key/);
  });

  it('reports an error event inside the stream', async () => {
    peer.script([{ content: 'Partial ' }, { error: 'out of memory' }]);
    await expect(provider({ apiKey: 'sk-test' }).answer(contractRequest(), ignore, never())).rejects.toThrow(/out of memory/);
  });

  it('times out a server that stalls mid-stream, and closes the connection', async () => {
    peer.script([{ content: 'Start ' }, { stopMidStream: true }]);
    const started = Date.now();
    await expect(provider({ apiKey: 'sk-test', timeoutMs: 300, maxRetries: 0 }).answer(contractRequest(), ignore, never())).rejects.toBeInstanceOf(OpenAiTimeoutError);
    expect(Date.now() - started).toBeLessThan(2_000);
    await peer.requests.at(-1)!.closed;
    expect(peer.requests.at(-1)!.abandoned).toBe(true);
  });

  it('does not count a slow reader against the timeout', async () => {
    peer.script([{ content: 'a ' }, { content: 'b ' }, { content: 'c' }]);
    const result = await provider({ apiKey: 'sk-test', timeoutMs: 200 }).answer(contractRequest(), () => sleep(150), never());
    expect(result.text).toBe('a b c');
  });

  it('cancels the upstream request when the caller aborts', async () => {
    peer.script(Array.from({ length: 100 }, (_, i) => ({ content: `w${i} `, delayMs: 20 })));
    const controller = new AbortController();
    let n = 0;
    const run = provider({ apiKey: 'sk-test' }).answer(
      contractRequest(),
      async () => {
        if (++n === 3) controller.abort(new Error('client left'));
      },
      controller.signal,
    );
    await expect(run).rejects.toThrow('client left');
    const chat = peer.requests.find((r) => r.path === '/v1/chat/completions')!;
    await Promise.race([chat.closed, sleep(1_000)]);
    expect(chat.abandoned).toBe(true);
  });

  it('summarizes with JSON mode, and without it on servers that reject response_format', async () => {
    peer.script([{ content: '{"summary":"About JetStream.","tags":["NATS","JetStream"]}' }]);
    expect(await provider({ apiKey: 'sk-test' }).summarize('JetStream stores messages.')).toEqual({ summary: 'About JetStream.', tags: ['nats', 'jetstream'], source: 'model' });
    const [body] = peer.chatBodies();
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.stream).toBe(false);
    expect(body.messages[1].content).toContain('<note>\nJetStream stores messages.\n</note>');

    await peer.close();
    peer = await startOpenAiPeer({ jsonMode: false });
    peer.script([{ content: '```json\n{"summary":"S.","tags":["a"]}\n```' }]);
    expect(await provider().summarize('x')).toEqual({ summary: 'S.', tags: ['a'], source: 'model' });
    expect(peer.chatBodies().map((b) => b.response_format !== undefined)).toEqual([true, false]);
  });

  it('is not ready when the server lists models without ours, or cannot be reached', async () => {
    expect((await provider({ apiKey: 'sk-test' }).readiness()).ready).toBe(true);
    const missing = await provider({ apiKey: 'sk-test', model: 'nope' }).readiness();
    expect(missing.ready).toBe(false);
    expect(String(missing.details.error)).toMatch(/model nope is not served/);
    const url = peer.url;
    await peer.close();
    const down = await new OpenAiProvider({ ...options(peer), baseUrl: url }).readiness();
    expect(down.ready).toBe(false);
    peer = await startOpenAiPeer();
  });
});

describe('OpenAI-compatible provider without OPENAI_MODEL', () => {
  it('asks the first model the server lists', async () => {
    const peer = await startOpenAiPeer({ models: ['served-a', 'served-b'] });
    try {
      const { model: _unused, ...rest } = options(peer);
      const provider = new OpenAiProvider(rest);
      peer.script([{ content: 'ok' }]);
      await provider.answer(contractRequest(), ignore, never());
      expect(peer.chatBodies()[0].model).toBe('served-a');
      expect((await provider.readiness()).details.model).toBe('served-a');
    } finally {
      await peer.close();
    }
  });
});

describe('query rewrite (rag_config.query_rewrite)', () => {
  it('asks the model for a standalone query, with the conversation fenced as data, and takes its first line', async () => {
    const peer = await startOpenAiPeer();
    try {
      peer.script([{ content: '"JetStream backup schedule"\nbecause the user asks about backups' }]);
      const rewritten = await new OpenAiProvider(options(peer)).rewriteQuery(
        'And how often does it run?',
        [
          { role: 'user', content: 'How are JetStream backups made?' },
          { role: 'model', content: 'Nightly copies [1].' },
        ],
        never(),
      );
      expect(rewritten).toBe('JetStream backup schedule');
      const [body] = peer.chatBodies();
      expect(body.stream).toBe(false);
      expect(body.messages[1].content).toContain('<conversation>\nUser: How are JetStream backups made?\nAssistant: Nightly copies [1].\n</conversation>');
      expect(body.messages[1].content).toMatch(/Last user message: And how often does it run\?$/);
    } finally {
      await peer.close();
    }
  });
});
