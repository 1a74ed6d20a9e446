import { describe, expect, it } from 'vitest';
import type { Chat, ChatGetReply } from '@memex/contracts';
import { pageChat } from './chatPages';

const message = (i: number, content: string) => ({
  uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  content,
  sent_by: (i % 2 ? 'model' : 'user') as 'user' | 'model',
  sent_at: '2026-11-23T00:00:00.000Z',
  client_system_prompt: null,
});

function join(chat: Chat, budget: number): { pages: ChatGetReply[]; messages: string[] } {
  const pages: ChatGetReply[] = [];
  const messages: string[] = [];
  let cursor: ChatGetReply['next'];
  do {
    const page = pageChat(chat, cursor, budget);
    expect(Buffer.byteLength(JSON.stringify({ ok: true, value: page }))).toBeLessThanOrEqual(budget);
    page.messages.forEach((m, i) => (i === 0 && cursor && cursor.offset > 0 ? (messages[messages.length - 1] += m.content) : messages.push(m.content)));
    pages.push(page);
    cursor = page.next;
  } while (cursor);
  return { pages, messages };
}

describe('pageChat', () => {
  it('answers a short chat in one page', () => {
    const chat: Chat = { uuid: 'c', created_at: 'now', messages: [message(0, 'hi'), message(1, 'hello')] };
    expect(pageChat(chat, undefined, 10_000)).toEqual(chat);
  });

  it('splits long and escape-heavy contents across pages, within the budget, losing nothing', () => {
    const contents = ['a'.repeat(5000), '"\n\\'.repeat(3000), '🙂é'.repeat(2000), '\u0001'.repeat(1500), 'short'];
    const chat: Chat = { uuid: 'c', created_at: 'now', messages: contents.map((c, i) => message(i, c)) };
    const { pages, messages } = join(chat, 4096);
    expect(pages.length).toBeGreaterThan(10);
    expect(messages).toEqual(contents);
  });
});
