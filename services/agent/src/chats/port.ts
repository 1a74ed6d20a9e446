import type { Citation, IntermediateStep } from '@memex/contracts';

/** Chat events: a chat is the stream of its messages. */
export type ChatEvent =
  | { type: 'ChatStarted'; data: { chatId: string; projectId: string; title: string; at: string } }
  | {
      type: 'MessageAdded';
      data: {
        messageId: string;
        sentBy: 'user' | 'model';
        content: string;
        /** The system prompt the client sent with a user message, or null. */
        clientSystemPrompt: string | null;
        at: string;
        citations?: Citation[];
        intermediateSteps?: IntermediateStep[];
        /** Set on a model message that is not the whole answer: why, and the cap or error that ended it. */
        incomplete?: Incomplete;
      };
    };

/** Why an answer stopped short: a cap (named with its value) or the model failing mid-stream. */
export interface Incomplete {
  reason: 'max_tokens' | 'timeout' | 'error';
  detail: string;
}

/** A chat as the list shows it. */
export interface ChatRecord {
  chatId: string;
  projectId: string;
  createdAt: string;
  /** The first user message, shortened. */
  title: string;
  messageCount: number;
  lastMessageAt: string;
  version: number;
}

export class ChatVersionConflictError extends Error {
  constructor(readonly chatId: string) {
    super(`Version conflict on chat ${chatId}`);
    this.name = 'ChatVersionConflictError';
  }
}

/**
 * Where the agent keeps chats: an append-only stream of events per chat, guarded by version, plus
 * the list view updated with each append.
 */
export interface ChatStore {
  readonly kind: 'sqlite' | 'mongodb';
  /** Appends to the chat at `expectedVersion` (0 for a new chat); `ChatVersionConflictError` otherwise. */
  append(chatId: string, projectId: string, events: readonly ChatEvent[], expectedVersion: number): Promise<ChatRecord>;
  load(chatId: string): Promise<{ record: ChatRecord; events: ChatEvent[] } | undefined>;
  /** The project's chats, newest first (by creation, then id), one page. */
  list(projectId: string, page: { page: number; pageSize: number }): Promise<{ chats: ChatRecord[]; count: number }>;
  close(): Promise<void>;
}

/** The list view of a chat after `events` (from its record before them, if any). */
export function project(before: ChatRecord | undefined, chatId: string, projectId: string, events: readonly ChatEvent[]): ChatRecord {
  let record = before;
  for (const event of events) {
    if (event.type === 'ChatStarted') {
      record = {
        chatId,
        projectId,
        createdAt: event.data.at,
        title: event.data.title,
        messageCount: 0,
        lastMessageAt: event.data.at,
        version: record?.version ?? 0,
      };
    } else {
      if (!record) throw new Error(`chat ${chatId}: message before ChatStarted`);
      record = { ...record, messageCount: record.messageCount + 1, lastMessageAt: event.data.at };
    }
    record = { ...record, version: record.version + 1 };
  }
  if (!record) throw new Error(`chat ${chatId}: no events`);
  return record;
}
