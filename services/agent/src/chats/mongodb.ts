import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '@memex/runtime';
import { ChatVersionConflictError, project, type ChatEvent, type ChatRecord, type ChatStore } from './port';

interface CommitDoc {
  _id: string;
  chatId: string;
  projectId: string;
  /** Version of the first event in the commit. */
  version: number;
  lastVersion: number;
  /** JSON text: chat content may hold keys MongoDB treats specially. */
  events: string;
}

interface ChatDoc {
  _id: string;
  projectId: string;
  createdAt: string;
  title: string;
  messageCount: number;
  lastMessageAt: string;
  version: number;
}

const toRecord = (d: ChatDoc): ChatRecord => ({
  chatId: d._id,
  projectId: d.projectId,
  createdAt: d.createdAt,
  title: d.title,
  messageCount: d.messageCount,
  lastMessageAt: d.lastMessageAt,
  version: d.version,
});

/**
 * The production chat store. One document per append in `chat_commits` (its `_id` is chat id plus
 * first version, so two appends at the same version collide: that is the version guard), and the
 * list view in `chats`, written after the commit with a version guard. `load` always rebuilds the
 * record from the commits, so a list entry a crash left behind is repaired by the next append.
 */
export class MongoChatStore implements ChatStore {
  readonly kind = 'mongodb' as const;
  private readonly commits: Collection<CommitDoc>;
  private readonly chats: Collection<ChatDoc>;
  private readonly indexes: Promise<unknown>;

  constructor(db: Db) {
    this.commits = db.collection<CommitDoc>('chat_commits');
    this.chats = db.collection<ChatDoc>('chats');
    this.indexes = Promise.all([
      this.commits.createIndex({ chatId: 1, version: 1 }, { unique: true }),
      this.chats.createIndex({ projectId: 1, createdAt: -1, _id: -1 }),
    ]);
  }

  ready(): Promise<unknown> {
    return this.indexes;
  }

  private async events(chatId: string): Promise<{ projectId: string | undefined; events: ChatEvent[]; version: number }> {
    const commits = await this.commits.find({ chatId }).sort({ version: 1 }).toArray();
    return {
      projectId: commits[0]?.projectId,
      events: commits.flatMap((c) => JSON.parse(c.events) as ChatEvent[]),
      version: commits.at(-1)?.lastVersion ?? 0,
    };
  }

  async append(chatId: string, projectId: string, events: readonly ChatEvent[], expectedVersion: number): Promise<ChatRecord> {
    await this.indexes;
    const current = await this.events(chatId);
    if (current.version !== expectedVersion || (current.projectId !== undefined && current.projectId !== projectId)) {
      throw new ChatVersionConflictError(chatId);
    }
    try {
      await this.commits.insertOne({
        _id: `${chatId}:${expectedVersion + 1}`,
        chatId,
        projectId,
        version: expectedVersion + 1,
        lastVersion: expectedVersion + events.length,
        events: JSON.stringify(events),
      });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new ChatVersionConflictError(chatId);
      throw error;
    }
    const record = project(undefined, chatId, projectId, [...current.events, ...events]);
    const { chatId: _id, ...rest } = record;
    try {
      await this.chats.updateOne({ _id, version: { $lt: record.version } }, { $set: rest }, { upsert: true });
    } catch (error) {
      // A concurrent, newer append already wrote the list entry: ours is older, so nothing to do.
      if (!isDuplicateKeyError(error)) throw error;
    }
    return record;
  }

  async load(chatId: string) {
    await this.indexes;
    const { projectId, events } = await this.events(chatId);
    if (projectId === undefined || events.length === 0) return undefined;
    return { record: project(undefined, chatId, projectId, events), events };
  }

  async list(projectId: string, { page, pageSize }: { page: number; pageSize: number }) {
    await this.indexes;
    const [docs, count] = await Promise.all([
      this.chats.find({ projectId }).sort({ createdAt: -1, _id: -1 }).skip((page - 1) * pageSize).limit(pageSize).toArray(),
      this.chats.countDocuments({ projectId }),
    ]);
    return { chats: docs.map(toRecord), count };
  }

  async close(): Promise<void> {
    // The client belongs to whoever opened it (see stores.ts).
  }
}
