import { inTransaction, openSqlite, type SqliteDatabase } from '@memex/runtime';
import { ChatVersionConflictError, project, type ChatEvent, type ChatRecord, type ChatStore } from './port';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS chat_events (
  chat_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  type    TEXT NOT NULL,
  data    TEXT NOT NULL,
  PRIMARY KEY (chat_id, version)
);
CREATE TABLE IF NOT EXISTS chats (
  chat_id         TEXT PRIMARY KEY,
  project_id      TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  title           TEXT NOT NULL,
  message_count   INTEGER NOT NULL,
  last_message_at TEXT NOT NULL,
  version         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chats_by_project ON chats (project_id, created_at DESC, chat_id DESC);
`;

interface ChatRow {
  chat_id: string;
  project_id: string;
  created_at: string;
  title: string;
  message_count: number;
  last_message_at: string;
  version: number;
}

const toRecord = (r: ChatRow): ChatRecord => ({
  chatId: r.chat_id,
  projectId: r.project_id,
  createdAt: r.created_at,
  title: r.title,
  messageCount: r.message_count,
  lastMessageAt: r.last_message_at,
  version: r.version,
});

/** The embedded chat store: events and the list view in one SQLite file, written in one transaction. */
export class SqliteChatStore implements ChatStore {
  readonly kind = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  private readonly stmts;

  constructor(path: string) {
    this.db = openSqlite(path);
    this.db.exec(SCHEMA);
    this.stmts = {
      chat: this.db.prepare<[string], ChatRow>('SELECT * FROM chats WHERE chat_id = ?'),
      events: this.db.prepare<[string], { type: string; data: string }>('SELECT type, data FROM chat_events WHERE chat_id = ? ORDER BY version'),
      insertEvent: this.db.prepare<[string, number, string, string]>('INSERT INTO chat_events (chat_id, version, type, data) VALUES (?, ?, ?, ?)'),
      upsertChat: this.db.prepare(
        `INSERT INTO chats (chat_id, project_id, created_at, title, message_count, last_message_at, version)
         VALUES (@chatId, @projectId, @createdAt, @title, @messageCount, @lastMessageAt, @version)
         ON CONFLICT (chat_id) DO UPDATE SET message_count = excluded.message_count,
           last_message_at = excluded.last_message_at, version = excluded.version`,
      ),
      page: this.db.prepare<[string, number, number], ChatRow>(
        'SELECT * FROM chats WHERE project_id = ? ORDER BY created_at DESC, chat_id DESC LIMIT ? OFFSET ?',
      ),
      count: this.db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM chats WHERE project_id = ?'),
    };
  }

  async append(chatId: string, projectId: string, events: readonly ChatEvent[], expectedVersion: number): Promise<ChatRecord> {
    const write = (): ChatRecord => {
      const row = this.stmts.chat.get(chatId);
      const current = row ? toRecord(row) : undefined;
      if ((current?.version ?? 0) !== expectedVersion || (current && current.projectId !== projectId)) {
        throw new ChatVersionConflictError(chatId);
      }
      events.forEach((e, i) => this.stmts.insertEvent.run(chatId, expectedVersion + i + 1, e.type, JSON.stringify(e.data)));
      const record = project(current, chatId, projectId, events);
      this.stmts.upsertChat.run(record);
      return record;
    };
    try {
      return inTransaction(this.db, write, { immediate: true });
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new ChatVersionConflictError(chatId);
      throw error;
    }
  }

  async load(chatId: string) {
    const row = this.stmts.chat.get(chatId);
    if (!row) return undefined;
    const events = this.stmts.events.all(chatId).map((e) => ({ type: e.type, data: JSON.parse(e.data) }) as ChatEvent);
    return { record: toRecord(row), events };
  }

  async list(projectId: string, { page, pageSize }: { page: number; pageSize: number }) {
    const chats = this.stmts.page.all(projectId, pageSize, (page - 1) * pageSize).map(toRecord);
    return { chats, count: this.stmts.count.get(projectId)?.n ?? 0 };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
