import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chat, ChatListResponse, ChatResponse, Filter, GenerateResponse, StreamEvent } from '@memex/contracts';
import { ExtractiveProvider, NOTHING_FOUND } from '@memex/agent/llm/extractive';
import type { AnswerRequest, TokenSink } from '@memex/agent/llm/port';
import { memoApi } from '../support/api';
import { startStack, type Stack } from '../support/stack';

/** The built-in provider, except that a question containing "explode" fails like a broken model. */
class FlakyProvider extends ExtractiveProvider {
  override async answer(request: AnswerRequest, onToken: TokenSink, signal: AbortSignal) {
    if (request.input.includes('explode')) {
      await onToken('Partial ');
      throw new Error('model crashed');
    }
    return super.answer(request, onToken, signal);
  }
}

/** Parses an SSE body into its comment lines and data events. */
function parseSse(body: string): { comments: string[]; events: StreamEvent[] } {
  const comments: string[] = [];
  const events: StreamEvent[] = [];
  for (const block of body.split('\n\n')) {
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line);
      else if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)) as StreamEvent);
    }
  }
  return { comments, events };
}

describe('chat and generate through the whole stack', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  let harbour: string;
  let secret: string;

  beforeAll(async () => {
    stack = await startStack({ agent: { llm: new FlakyProvider() }, env: { MEMEX_RATE_LIMIT: '0' } });
    ({ key } = await stack.project('main'));
    ({ key: otherKey } = await stack.project('other'));
    harbour = await create({
      title: 'Harbour operations',
      content: 'Container ships are unloaded by gantry cranes at the harbour. Each crane moves thirty containers an hour.',
      metadata: { team: 'ops' },
    });
    secret = await create({
      title: 'Crane maintenance budget',
      content: 'The gantry cranes need new cables next spring, which costs forty thousand euros.',
      metadata: { team: 'finance' },
    });
    await create({ title: 'Cranes elsewhere', content: 'Gantry cranes in the other project lift ninety containers an hour.' }, otherKey);
    for (const id of [harbour, secret]) await processed(id);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const headers = (k = key) => ({ authorization: `Bearer ${k}` });
  const create = (body: Record<string, unknown>, k = key) => memoApi(stack.app, k).create(body);
  const processed = (id: string, k = key) => memoApi(stack.app, k).processed(id);
  const chat = (payload: Record<string, unknown>, k = key) => stack.app.inject({ method: 'POST', url: '/api/v1/chat', headers: headers(k), payload });

  it('answers from the memos with citations, steps and a chat id, and keeps the chat', async () => {
    const res = await chat({ query: 'How many containers does a gantry crane move an hour?', system_prompt: 'Answer briefly.' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as ChatResponse;
    expect(body.ok).toBe(true);
    expect(body.response).toMatch(/thirty containers an hour/);
    expect(body.response).not.toMatch(/ninety/);
    expect(body.citations.map((c) => c.memo_uuid)).toContain(harbour);
    for (const c of body.citations) expect(body.response).toContain(`[${c.index}]`);
    expect(body.intermediate_steps[0]).toMatchObject({ tool: 'search_memos', input: { query: 'How many containers does a gantry crane move an hour?' } });
    expect(body.intermediate_steps[0]!.results.map((r) => r.memo_uuid)).toContain(harbour);

    const detail = await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${body.chat_id}`, headers: headers() });
    expect(detail.statusCode).toBe(200);
    const stored = detail.json() as Chat;
    expect(stored.uuid).toBe(body.chat_id);
    expect(stored.messages.map((m) => [m.sent_by, m.client_system_prompt])).toEqual([
      ['user', 'Answer briefly.'],
      ['model', null],
    ]);
    expect(stored.messages[1]!.content).toBe(body.response);

    const next = await chat({ query: 'And what do the cranes need next spring?', chat_id: body.chat_id });
    expect(next.statusCode).toBe(200);
    expect(next.json().chat_id).toBe(body.chat_id);
    expect(next.json().response).toMatch(/cables/);
    const again = (await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${body.chat_id}`, headers: headers() })).json() as Chat;
    expect(again.messages).toHaveLength(4);
  });

  it('uses no memo outside the filters or the project', async () => {
    const opsOnly: Filter[] = [{ field: 'team', operator: 'eq', value: 'ops', filter_type: 'custom_metadata' }];
    const res = await chat({ query: 'What do the gantry cranes need and what does it cost?', filters: opsOnly });
    const body = res.json() as ChatResponse;
    expect(body.response).not.toMatch(/forty thousand|cables/);
    const used = new Set([...body.citations.map((c) => c.memo_uuid), ...body.intermediate_steps.flatMap((s) => s.results.map((r) => r.memo_uuid))]);
    expect(used.has(secret)).toBe(false);
    expect([...used].every((id) => id === harbour)).toBe(true);
  });

  it('says so plainly when the knowledge base has nothing relevant', async () => {
    const res = await chat({ query: 'What is the airspeed velocity of an unladen swallow?' });
    expect(res.json().response).toBe(NOTHING_FOUND);
    expect(res.json().citations).toEqual([]);
  });

  it('streams the answer as server-sent events: ping, tokens, citations, done with the chat id', async () => {
    const res = await chat({ query: 'How are container ships unloaded?', stream: true });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.body.startsWith(': ping\n\n')).toBe(true);
    const { events } = parseSse(res.body);
    const tokens = events.filter((e): e is Extract<StreamEvent, { type: 'token' }> => e.type === 'token');
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.map((t) => t.content).join('')).toMatch(/gantry cranes/);
    const kinds = events.map((e) => e.type);
    expect(kinds.slice(-2)).toEqual(['citations', 'done']);
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    expect(done.chat_id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = (await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${done.chat_id}`, headers: headers() })).json() as Chat;
    expect(stored.messages[1]!.content).toBe(tokens.map((t) => t.content).join(''));
  });

  it('reports an LLM failure as 500 Agent error, and mid-stream as an error event then done', async () => {
    const res = await chat({ query: 'Please explode now' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Agent error: model crashed' });
    const streamed = await chat({ query: 'Please explode now', stream: true });
    const { events } = parseSse(streamed.body);
    expect(events.map((e) => e.type)).toEqual(['token', 'error', 'done']);
    expect(events[1]).toEqual({ type: 'error', error: 'Agent error: model crashed', content: 'Agent error: model crashed' });
  });

  it('answers chat errors with the spec texts', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 400, 'Query is required'],
      [{ query: '   ' }, 400, 'Query is required'],
      [{ query: 'x', filters: 'team' }, 400, 'Filters must be a list'],
      [{ query: 'x', filters: [{ field: 'tags', operator: 'eq', value: 'a', filter_type: 'native_field' }] }, 400, "Invalid filter: filter 0: a tags filter must use 'in' or 'not_in' with an array value"],
      [{ query: 'x', chat_id: '00000000-0000-4000-8000-000000000000' }, 404, 'Chat not found'],
    ];
    for (const [payload, status, error] of cases) {
      const res = await chat(payload);
      expect([res.statusCode, res.json()]).toEqual([status, { error }]);
    }
  });

  it('keeps chats to their project', async () => {
    const mine = (await chat({ query: 'How are container ships unloaded?' })).json() as ChatResponse;
    expect((await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${mine.chat_id}`, headers: headers(otherKey) })).statusCode).toBe(404);
    expect((await chat({ query: 'continue', chat_id: mine.chat_id }, otherKey)).statusCode).toBe(404);
    const theirs = (await stack.app.inject({ method: 'GET', url: '/api/v1/chat', headers: headers(otherKey) })).json() as ChatListResponse;
    expect(theirs.results.map((c) => c.uuid)).not.toContain(mine.chat_id);
    expect((await stack.app.inject({ method: 'GET', url: '/api/v1/chat/not-a-uuid', headers: headers() })).json()).toEqual({ error: 'Chat not found' });
  });

  it('lists chats newest first with paging', async () => {
    const list = async (q: string) => stack.app.inject({ method: 'GET', url: `/api/v1/chat${q}`, headers: headers() });
    const all = (await list('')).json() as ChatListResponse;
    expect(all.page).toBe(1);
    expect(all.page_size).toBe(20);
    expect(all.count).toBeGreaterThanOrEqual(4);
    expect(all.total_pages).toBe(Math.ceil(all.count / 20));
    const created = all.results.map((c) => c.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const first = all.results.find((c) => c.title === 'How many containers does a gantry crane move an hour?');
    expect(first).toMatchObject({ message_count: 4 });
    const paged = (await list('?page=2&page_size=1')).json() as ChatListResponse;
    expect(paged).toMatchObject({ page: 2, page_size: 1, total_pages: all.count });
    expect(paged.results).toEqual([all.results[1]]);
    expect((await list('?page_size=101')).json()).toEqual({ error: 'page_size must be less than or equal to 100' });
    expect((await list('?page=0')).statusCode).toBe(400);
  });

  it('generates a cited Markdown document that follows the rules it can', async () => {
    const res = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/generate',
      headers: headers(),
      payload: { prompt: 'Write a report about gantry cranes at the harbour', rules: 'Use numbered lists.' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as GenerateResponse;
    expect(body.ok).toBe(true);
    expect(body.response).toMatch(/^# Gantry Cranes at the Harbour/);
    expect(body.response).toMatch(/^## Sources$/m);
    expect(body.response).toMatch(/^1\. .+\[\d\]$/m);
    expect(body.citations.length).toBeGreaterThan(0);
    for (const c of body.citations) expect(body.response).toContain(`[${c.index}] ${c.memo_title}`);

    const streamed = await stack.app.inject({ method: 'POST', url: '/api/v1/generate', headers: headers(), payload: { prompt: 'Summarize crane operations', stream: true } });
    const { events } = parseSse(streamed.body);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(events.filter((e) => e.type === 'token').length).toBeGreaterThan(5);

    const missing = await stack.app.inject({ method: 'POST', url: '/api/v1/generate', headers: headers(), payload: { rules: 'x' } });
    expect([missing.statusCode, missing.json()]).toEqual([400, { error: 'Prompt is required' }]);
  });
});
