import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets, type Chat, type ChatListItem } from '@memex/contracts';

/** Who a chat belongs to: a key, and for a token the subject it was minted for. */
export interface ChatCaller {
  projectId: string;
  keyId: string | null;
  subject: string | null;
}

interface ChatOwner {
  keyId: string | null;
  subject: string | null;
  createdAt: string;
}

const TITLE_CHARS = 200;

/**
 * Which scoped key (and token subject) started each chat: a scoped caller sees, reads and continues
 * only its own chats. Owner keys see every chat of the project, as before.
 */
export class ChatOwners {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas: number): Promise<ChatOwners> {
    return new ChatOwners(await new Kvm(nc).create(Buckets.chatOwners, { history: 1, replicas }));
  }

  private static key(projectId: string, chatId: string): string {
    return `${projectId}.${chatId}`;
  }

  async record(caller: ChatCaller, chatId: string): Promise<void> {
    const owner: ChatOwner = { keyId: caller.keyId, subject: caller.subject, createdAt: new Date().toISOString() };
    await this.kv.put(ChatOwners.key(caller.projectId, chatId), JSON.stringify(owner));
  }

  async owns(caller: ChatCaller, chatId: string): Promise<boolean> {
    const entry = await this.kv.get(ChatOwners.key(caller.projectId, chatId));
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return false;
    const owner = entry.json<ChatOwner>();
    return owner.keyId === caller.keyId && owner.subject === caller.subject;
  }

  /** The caller's chat ids, newest first. */
  async chatsOf(caller: ChatCaller): Promise<string[]> {
    const out: { chatId: string; createdAt: string }[] = [];
    for await (const key of await this.kv.keys(`${caller.projectId}.*`)) {
      const entry = await this.kv.get(key);
      if (!entry || entry.operation !== 'PUT' || entry.length === 0) continue;
      const owner = entry.json<ChatOwner>();
      if (owner.keyId === caller.keyId && owner.subject === caller.subject) out.push({ chatId: key.slice(caller.projectId.length + 1), createdAt: owner.createdAt });
    }
    return out.sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((c) => c.chatId);
  }
}

/** A list item from a whole chat; the title is its first question shortened at a word, as the agent names chats. */
export function chatListItem(chat: Chat): ChatListItem {
  const first = chat.messages.find((m) => m.sent_by === 'user')?.content.trim() ?? '';
  let title = first;
  if (first.length > TITLE_CHARS) {
    const cut = first.slice(0, TITLE_CHARS);
    const space = cut.lastIndexOf(' ');
    title = `${space > TITLE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
  }
  return {
    uuid: chat.uuid,
    created_at: chat.created_at,
    title,
    message_count: chat.messages.length,
    last_message_at: chat.messages.at(-1)?.sent_at ?? chat.created_at,
  };
}
