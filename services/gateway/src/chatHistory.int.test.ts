import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '@memex/testing';
import { startStack, type Stack } from '../../../test/support/stack';

/**
 * GET of a chat whose history is larger than one NATS message (issue 9, item 1): the agent answers in
 * pages and the gateway joins them. The nats-server here allows 64 KiB messages, so a few long turns
 * are enough.
 */
describe('GET /api/v1/chat/:id with a history larger than max_payload', () => {
  let stack: Stack;
  let confDir: ReturnType<typeof tempDir>;
  let headers: Record<string, string>;
  beforeAll(async () => {
    confDir = tempDir('memex-nats-conf-');
    const conf = join(confDir.path, 'nats.conf');
    writeFileSync(conf, 'max_payload: 65536\n');
    stack = await startStack({ natsArgs: ['-c', conf] });
    const { key } = await stack.project();
    headers = { authorization: `Bearer ${key}` };
  });
  afterAll(async () => {
    await stack?.stop();
    confDir?.remove();
  });

  it('answers the whole chat, every message byte for byte, and the agent keeps serving', async () => {
    // Quotes, newlines and astral characters cost more in JSON than in characters: pages must count bytes.
    const turn = (i: number) => `Turn ${i}: ${'"quoted"\n'.repeat(600)}${'🙂'.repeat(2000)}${'plain words '.repeat(300)}end ${i}`;
    const queries = Array.from({ length: 10 }, (_, i) => turn(i));
    let chatId: string | undefined;
    for (const q of queries) {
      const res = await stack.app.inject({ method: 'POST', url: '/api/v1/chat', headers, payload: { query: q, ...(chatId ? { chat_id: chatId } : {}) } });
      expect(res.statusCode, res.body).toBe(200);
      chatId = res.json().chat_id as string;
    }
    const got = await stack.app.inject({ method: 'GET', url: `/api/v1/chat/${chatId}`, headers });
    expect(got.statusCode, got.body.slice(0, 200)).toBe(200);
    expect(Buffer.byteLength(got.body)).toBeGreaterThan(2 * 65536);
    const chat = got.json() as { uuid: string; messages: Array<{ content: string; sent_by: string }> };
    expect(chat.uuid).toBe(chatId);
    expect(chat.messages).toHaveLength(20);
    expect(chat.messages.filter((m) => m.sent_by === 'user').map((m) => m.content)).toEqual(queries);
    const list = await stack.app.inject({ method: 'GET', url: '/api/v1/chat', headers });
    expect(list.statusCode).toBe(200);
  });
});
