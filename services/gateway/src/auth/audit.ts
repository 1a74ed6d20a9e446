import { createHash } from 'node:crypto';
import { DiscardPolicy, RetentionPolicy, StorageType, jetstream, type JetStreamClient, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { MemexError, Streams, Subjects, type AuditEntry, type AuditFilter, type AuditRecord, type AuditResponse } from '@memex/contracts';
import type { Logger } from '@memex/runtime';
import type { AuditNote } from './scopes';

export type AuditQueries = 'off' | 'hash' | 'full';

/** Entries kept in memory before a write is forced; and the longest an entry waits to be written. */
const BATCH_MAX = 256;
const BATCH_DELAY_MS = 50;
/** Most stream messages one read looks at before answering with a `next` cursor. */
const SCAN_MAX = 2_000;

/** `MEMEX_AUDIT_RETENTION`: `90d`, `12h`, `30m`, `3600s`, or plain seconds. */
export function parseRetention(text: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!match) throw new Error(`MEMEX_AUDIT_RETENTION must be a duration such as 90d, 12h or 3600s, not ${JSON.stringify(text)}`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  const ms = Number(match[1]) * unit * 1000;
  if (ms <= 0) throw new Error('MEMEX_AUDIT_RETENTION must be positive');
  return ms;
}

/** A cursor is `<stream sequence>-<index in that message>`; entries are read strictly after it. */
function parseCursor(after: string | undefined): { seq: number; index: number } {
  if (after === undefined || after === '') return { seq: 0, index: -1 };
  const match = /^(\d{1,15})(?:-(\d{1,6}))?$/.exec(after);
  if (!match) throw new MemexError('InvalidRequest', 'after must be a cursor from an earlier answer');
  return { seq: Number(match[1]), index: match[2] === undefined ? Number.MAX_SAFE_INTEGER : Number(match[2]) };
}

/** An answered call as it waits to be written: what the request path pays is this object alone. */
interface Answered {
  note: AuditNote;
  status: number;
  requestId: string;
  at: number;
}

/**
 * The audit trail: one JetStream stream (`AUDIT`, a subject per project, `max_age` the retention),
 * written by the gateway. A request only queues its note (no I/O, no await, no formatting); entries
 * are formatted, grouped per project and published off the request path, one message per project
 * per batch. At most BATCH_DELAY_MS or BATCH_MAX entries wait in memory, so a gateway that crashes
 * loses the entries of at most its last BATCH_DELAY_MS of answered requests; a graceful stop
 * writes them all.
 */
export class AuditTrail {
  private pending: Answered[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writes = new Set<Promise<void>>();

  private stream: Promise<JetStreamClient> | undefined;

  /** Connects nothing until the first entry is written or read (the stream is made then). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly options: { retentionMs: number; replicas: number; queries: AuditQueries; logger: Logger },
  ) {}

  private get queries(): AuditQueries {
    return this.options.queries;
  }

  private get logger(): Logger {
    return this.options.logger;
  }

  /** Makes the AUDIT stream, or brings it up to date (retention, replicas), now. */
  async open(): Promise<void> {
    await this.ready();
  }

  /** The AUDIT stream, made or brought up to date (retention) on first use. */
  private ready(): Promise<JetStreamClient> {
    this.stream ??= (async () => {
      const config: Partial<StreamConfig> & { name: string } = {
        name: Streams.audit,
        subjects: [Subjects.auditAll],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        discard: DiscardPolicy.Old,
        max_age: nanos(this.options.retentionMs),
        num_replicas: this.options.replicas,
        allow_direct: true,
      };
      try {
        await this.jsm.streams.info(config.name);
        await this.jsm.streams.update(config.name, config);
      } catch (error) {
        if (!/not found/i.test(String((error as Error)?.message))) throw error;
        await this.jsm.streams.add(config).catch((e: unknown) => {
          // Another gateway made it meanwhile.
          if (!/already in use/i.test(String((e as Error)?.message))) throw e;
        });
      }
      return jetstream(this.nc);
    })().catch((error: unknown) => {
      this.stream = undefined;
      throw error;
    });
    return this.stream;
  }

  /** The query text as MEMEX_AUDIT_QUERIES says: nothing, its SHA-256, or the text. */
  queryField(text: string | undefined): string | undefined {
    if (text === undefined || this.queries === 'off') return undefined;
    return this.queries === 'hash' ? createHash('sha256').update(text).digest('hex') : text;
  }

  /** Queues the entry of an answered call; written within BATCH_DELAY_MS. */
  record(note: AuditNote, status: number, requestId: string): void {
    this.pending.push({ note, status, requestId, at: Date.now() });
    if (this.pending.length >= BATCH_MAX) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), BATCH_DELAY_MS);
  }

  private entryOf({ note, status, requestId, at }: Answered): AuditRecord {
    const query = this.queryField(note.query);
    return {
      at: new Date(at).toISOString(),
      project_id: note.caller.projectId,
      key_id: note.caller.keyId,
      subject: note.caller.subject,
      action: note.action,
      status,
      memo_ids: [...note.memoIds],
      request_id: requestId,
      ...(query !== undefined ? { query } : {}),
    };
  }

  /** Starts writing what waits; resolves when it is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const answered = this.pending;
    this.pending = [];
    if (answered.length === 0) return Promise.resolve();
    const batches = new Map<string, AuditRecord[]>();
    for (const a of answered) {
      const entry = this.entryOf(a);
      const list = batches.get(entry.project_id);
      if (list) list.push(entry);
      else batches.set(entry.project_id, [entry]);
    }
    const write = Promise.all(
      [...batches].map(([projectId, entries]) =>
        this.ready().then((js) => js.publish(Subjects.audit(projectId), JSON.stringify(entries))).then(() => undefined, (error: unknown) => {
          this.logger.error({ err: error, projectId, entries: entries.length }, 'audit entries could not be written');
        }),
      ),
    ).then(() => undefined);
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
    return write;
  }

  /** Waits until every entry recorded so far is stored. */
  async settle(): Promise<void> {
    this.flush();
    await Promise.all([...this.writes]);
  }

  /** A project's entries after the cursor, oldest first, that pass the filter. */
  async read(projectId: string, filter: AuditFilter): Promise<AuditResponse> {
    await this.ready();
    const cursor = parseCursor(filter.after);
    const subject = Subjects.audit(projectId);
    const results: AuditEntry[] = [];
    let seq = cursor.seq;
    let firstIndex = cursor.index + 1;
    let last: string | null = filter.after ?? null;
    for (let scanned = 0; scanned < SCAN_MAX; scanned++) {
      const message = await this.next(subject, firstIndex > 0 ? seq : seq + 1);
      if (!message) break;
      seq = message.seq;
      const entries = JSON.parse(new TextDecoder().decode(message.data)) as AuditRecord[];
      for (let i = firstIndex; i < entries.length; i++) {
        const e = entries[i]!;
        last = `${seq}-${i}`;
        if (filter.keyId !== undefined && e.key_id !== filter.keyId) continue;
        if (filter.action !== undefined && e.action !== filter.action) continue;
        if (filter.memoId !== undefined && !e.memo_ids.includes(filter.memoId)) continue;
        results.push({
          id: last,
          at: e.at,
          key_id: e.key_id,
          subject: e.subject,
          action: e.action,
          status: e.status,
          memo_ids: e.memo_ids,
          request_id: e.request_id,
          ...(e.query !== undefined ? { query: e.query } : {}),
        });
        if (results.length === filter.limit) return { results, next: last };
      }
      firstIndex = 0;
    }
    return { results, next: last };
  }

  /** The first message of `subject` at or after `seq` (direct get, no consumer). */
  private async next(subject: string, seq: number) {
    try {
      return await this.jsm.direct.getMessage(Streams.audit, { seq, next_by_subj: subject });
    } catch (error) {
      if (/no message found|not found/i.test(String((error as Error)?.message))) return null;
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.settle();
  }
}
