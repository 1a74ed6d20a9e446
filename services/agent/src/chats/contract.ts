/**
 * The chat store contract: every adapter runs this suite (SQLite always; MongoDB when reachable).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatVersionConflictError, type ChatEvent, type ChatStore } from './port';

export interface ChatStoreFixture {
  store: ChatStore;
  dispose(): Promise<void>;
}

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const started = (chatId: string, projectId: string, title: string, s = 0): ChatEvent => ({
  type: 'ChatStarted',
  data: { chatId, projectId, title, at: at(s) },
});
const message = (sentBy: 'user' | 'model', content: string, s: number, clientSystemPrompt: string | null = null): ChatEvent => ({
  type: 'MessageAdded',
  data: { messageId: randomUUID(), sentBy, content, clientSystemPrompt, at: at(s) },
});

export function chatStoreContract(name: string, setup: () => Promise<ChatStoreFixture>): void {
  describe(`chat store contract: ${name}`, () => {
    let fixture: ChatStoreFixture;
    let store: ChatStore;
    beforeAll(async () => {
      fixture = await setup();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.dispose();
    });

    it('stores a chat and reads its messages back in order', async () => {
      const p = randomUUID();
      const c = randomUUID();
      const record = await store.append(c, p, [started(c, p, 'What is NATS?'), message('user', 'What is NATS?', 1, 'Be brief'), message('model', 'A messaging system. [1]', 2)], 0);
      expect(record).toMatchObject({ chatId: c, projectId: p, title: 'What is NATS?', messageCount: 2, version: 3, createdAt: at(0), lastMessageAt: at(2) });
      const loaded = await store.load(c);
      expect(loaded?.record).toEqual(record);
      expect(loaded?.events.map((e) => (e.type === 'MessageAdded' ? [e.data.sentBy, e.data.content, e.data.clientSystemPrompt] : e.type))).toEqual([
        'ChatStarted',
        ['user', 'What is NATS?', 'Be brief'],
        ['model', 'A messaging system. [1]', null],
      ]);
      expect(await store.load(randomUUID())).toBeUndefined();
    });

    it('continues a chat at its version and refuses a stale one', async () => {
      const p = randomUUID();
      const c = randomUUID();
      await store.append(c, p, [started(c, p, 'q'), message('user', 'q', 1), message('model', 'a', 2)], 0);
      const next = await store.append(c, p, [message('user', 'q2', 3), message('model', 'a2', 4)], 3);
      expect(next).toMatchObject({ messageCount: 4, version: 5, lastMessageAt: at(4), title: 'q' });
      await expect(store.append(c, p, [message('user', 'late', 5)], 3)).rejects.toBeInstanceOf(ChatVersionConflictError);
      await expect(store.append(c, p, [started(c, p, 'again')], 0)).rejects.toBeInstanceOf(ChatVersionConflictError);
      const racing = await Promise.allSettled([1, 2, 3].map((i) => store.append(c, p, [message('user', `r${i}`, 6)], 5)));
      expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await store.load(c))?.record.messageCount).toBe(5);
    });

    it('lists a project\'s chats newest first, paged, with the total', async () => {
      const p = randomUUID();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const c = randomUUID();
        ids.push(c);
        await store.append(c, p, [started(c, p, `chat ${i}`, 10 + i), message('user', `chat ${i}`, 10 + i)], 0);
      }
      await store.append(randomUUID(), randomUUID(), [started('x', 'y', 'elsewhere')], 0).catch(() => undefined);
      const first = await store.list(p, { page: 1, pageSize: 2 });
      expect(first.count).toBe(5);
      expect(first.chats.map((c) => c.title)).toEqual(['chat 4', 'chat 3']);
      const last = await store.list(p, { page: 3, pageSize: 2 });
      expect(last.chats.map((c) => c.title)).toEqual(['chat 0']);
      expect((await store.list(p, { page: 4, pageSize: 2 })).chats).toEqual([]);
      expect(await store.list(randomUUID(), { page: 1, pageSize: 20 })).toEqual({ chats: [], count: 0 });
    });
  });
}
