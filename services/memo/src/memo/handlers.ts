import {
  MemexError,
  Subjects,
  type BatchItemResult,
  isUuid,
  matchesFilters,
  type Filter,
  type ChunkPreview,
  type ContentRef,
  type CreateBatchItem,
  type CreateBatchOutcome,
  type MemoView,
  type ErasureReason,
  type MemoEvent,
  type MemoRef,
  type StoredCreateInput,
  type StoredUpdateInput,
  type SummaryResult,
  type WireError,
} from '@memex/contracts';
import {
  activeTraceMeta,
  KeyErasedError,
  uuidV7,
  type CommandContext,
  type CommandHandlers,
  type ContentStore,
  type Failpoints,
  type Keyring,
  type Logger,
} from '@memex/runtime';
import { VersionConflictError, type EventStore, type NewEvent, type StoredEvent } from '../eventStore/port';
import type { OutboxPublisher } from '../outbox/publisher';
import { filterable, type MemoReadModel, type MemoRecord } from '../readModel/port';
import { ContentRefCache, type InlineContentRef } from './contentRefs';
import { decide, evolve, fold, toDomainEvents, type MemoCommand, type MemoState } from './decider';
import type { ReferenceClaims } from './references';
import { memoStream } from './streams';
import { toAttributes, toMemo, toStoredMemo } from './view';

interface MemoHandlerDeps {
  store: EventStore;
  readModel: MemoReadModel;
  publisher: OutboxPublisher;
  references: ReferenceClaims;
  keyring: Keyring;
  content: ContentStore;
  clock: () => Date;
  logger: Logger;
  failpoint?: Failpoints;
  /**
   * False writes the forms the version before reads (see formats.ts): found tags in a `MemoTagged`
   * of their own, stored memos whole. Default true.
   */
  compact?: boolean;
}

interface Executed {
  /** The state the command was decided on (the last one read, after any retries). */
  before: MemoState;
  state: MemoState;
  eventSeq?: number;
  /** False when the command changed nothing (already applied, stale revision, no-op). */
  applied: boolean;
}

/** One memo's command in a batch (`executeBatch`). */
interface BatchItem {
  /** The item's place in the batch command, which names it in its command id. */
  at: number;
  projectId: string;
  memoId: string;
  command: (now: string) => MemoCommand;
  /** The item's own command id (default `<batch command id>:<at>`) and request id. */
  commandId?: string;
  requestId?: string;
}

/** Version conflicts retried before giving up: each retry re-reads the stream and decides again. */
const MAX_ATTEMPTS = 20;

/**
 * A command's decided events as the store takes them, each with the memo's attribute snapshot after
 * it (what it goes out with), and the state after the last.
 */
export function toNewEvents(
  decided: readonly MemoEvent[],
  state: MemoState,
  meta: { commandId: string; requestId?: string | undefined; subject: string },
  now: string,
): { events: NewEvent[]; next: MemoState } {
  let next = state;
  // The command's trace (the handling span, active while it decides), for the outbox to carry on.
  const trace = activeTraceMeta();
  const events = decided.map((event): NewEvent => {
    next = evolve(next, event);
    return {
      id: uuidV7(),
      type: event.type,
      data: event.data,
      occurredAt: now,
      meta: {
        commandId: meta.commandId,
        ...(meta.requestId ? { requestId: meta.requestId } : {}),
        ...trace,
        subject: meta.subject,
        memo: toAttributes(next),
      },
    };
  });
  return { events, next };
}

/**
 * The memo command handlers: load the stream, decide, append with the version read (retrying on a
 * conflict), update the read model, publish, reply. Every step after the append is repeated by the
 * outbox sweep if the process dies, so the reply is the only thing a crash can lose.
 */
export class MemoCommandService {
  /** The inline content references GETs read, by the event holding them; emptied on any shred. */
  private readonly contentRefs = new ContentRefCache();

  constructor(private readonly deps: MemoHandlerDeps) {
    deps.keyring.onShred(() => this.contentRefs.clear());
  }

  /** How many inline content references are kept (see {@link ContentRefCache}). */
  get contentRefsHeld(): number {
    return this.contentRefs.size;
  }

  /** Loads a memo stream's state and version. */
  async load(projectId: string, memoId: string): Promise<{ state: MemoState; version: number; events: StoredEvent[] }> {
    const { version, events } = await this.deps.store.readStream(memoStream(projectId, memoId));
    return { state: fold(toDomainEvents(events)), version, events };
  }

  /** Writes the read model from the stream as it now stands (idempotent; used after crashes too). */
  async project(streamName: string): Promise<void> {
    if (!streamName.startsWith('memo-')) return;
    const { version, events } = await this.deps.store.readStream(streamName);
    const state = fold(toDomainEvents(events));
    await this.projectState(state, version, events);
  }

  /** `events`: the stream's, with their versions (the read model points at the one holding the content). */
  private async projectState(state: MemoState, version: number, events: readonly { version: number; data: unknown }[]): Promise<void> {
    if (state.status === 'active') {
      const memo = this.deps.compact === false ? toMemo(state.memo) : toStoredMemo(state.memo, events);
      await this.deps.readModel.upsert({ projectId: state.memo.projectId, version, memo });
    } else if (state.status === 'deleted') {
      await this.deps.readModel.remove(state.projectId, state.memoId, version);
    }
  }

  async execute(
    projectId: string,
    memoId: string,
    command: (now: string) => MemoCommand,
    context: Pick<CommandContext, 'commandId' | 'requestId'>,
    { erase = false }: { erase?: boolean } = {},
  ): Promise<Executed> {
    const stream = memoStream(projectId, memoId);
    const subject = Subjects.memoEvents(projectId, memoId);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const { state, version, events: stored } = await this.load(projectId, memoId);
      // A redelivered command that already ran: answer as the first run did.
      if (stored.some((e) => e.meta.commandId === context.commandId)) return { before: state, state, applied: false };
      const now = this.deps.clock().toISOString();
      const decided = decide(command(now), state);
      if (decided.length === 0) return { before: state, state, applied: false };

      const { events, next } = toNewEvents(decided, state, { ...context, subject }, now);
      try {
        const appended = erase
          ? await this.deps.store.eraseStream(stream, onlyOne(events), { expectedVersion: version })
          : await this.deps.store.appendToStream(stream, events, { expectedVersion: version });
        this.deps.failpoint?.('memo.after-append');
        await this.projectState(next, appended.nextVersion, [...stored, ...events.map((e, i) => ({ version: version + 1 + i, data: e.data }))]);
        const eventSeq = await this.deps.publisher.publish(appended.events);
        return { before: state, state: next, applied: true, ...(eventSeq !== undefined ? { eventSeq } : {}) };
      } catch (error) {
        if (error instanceof VersionConflictError) {
          await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
          continue;
        }
        throw error;
      }
    }
    throw new Error(`gave up on ${stream} after ${MAX_ATTEMPTS} version conflicts`);
  }

  /**
   * Several memos' commands decided alone and appended in one event-store write
   * (`appendToStreams`); each item then is projected and published as `execute` does. An item
   * runs under the command id `<commandId>:<at>`, so a redelivered batch applies each item
   * once (two items of one memo stay two commands). Per item, in order: what it did, or the
   * `MemexError` (an erased key: `MemoNotFound`) that refused it alone. Any other error fails the
   * whole call, which is then retried as a command. An item may bring its own command and request
   * ids (`create-batch`: each memo's POST), and the appended events go out pipelined together.
   */
  async executeBatch(
    items: readonly BatchItem[],
    context: Partial<Pick<CommandContext, 'commandId' | 'requestId'>> & { failpoint?: string },
  ): Promise<(Executed | { error: MemexError })[]> {
    // Each item needs a command id, its own or one made from the batch's: it is what makes a redelivery apply nothing twice.
    if (context.commandId === undefined && items.some((item) => item.commandId === undefined)) throw new Error('a batch item has no command id, and the batch none to name it by');
    const results: (Executed | { error: MemexError } | undefined)[] = new Array(items.length);
    let todo = items.map((_, i) => i);
    for (let attempt = 1; todo.length > 0; attempt++) {
      if (attempt > MAX_ATTEMPTS) throw new Error(`gave up on a batch of ${items.length} after ${MAX_ATTEMPTS} version conflicts`);
      const now = this.deps.clock().toISOString();
      const plans: { i: number; stream: string; before: MemoState; next: MemoState; version: number; stored: StoredEvent[]; events: NewEvent[] }[] = [];
      await Promise.all(
        todo.map(async (i) => {
          const { projectId, memoId, command, at } = items[i]!;
          const commandId = items[i]!.commandId ?? `${context.commandId}:${at}`;
          const requestId = items[i]!.requestId ?? context.requestId;
          try {
            const { state, version, events: stored } = await this.load(projectId, memoId);
            if (stored.some((e) => e.meta.commandId === commandId)) return void (results[i] = { before: state, state, applied: false });
            const decided = decide(command(now), state);
            if (decided.length === 0) return void (results[i] = { before: state, state, applied: false });
            const subject = Subjects.memoEvents(projectId, memoId);
            const { events, next } = toNewEvents(decided, state, { commandId, requestId, subject }, now);
            plans.push({ i, stream: memoStream(projectId, memoId), before: state, next, version, stored, events });
          } catch (error) {
            const refused = refusal(error);
            if (!refused) throw error;
            results[i] = { error: refused };
          }
        }),
      );
      plans.sort((a, b) => a.i - b.i);
      const appended = await this.deps.store.appendToStreams(plans.map((p) => ({ streamName: p.stream, events: p.events, expectedVersion: p.version })));
      this.deps.failpoint?.(context.failpoint ?? 'memo.after-batch-append');
      const conflicted: number[] = [];
      const stored: { p: (typeof plans)[number]; events: StoredEvent[] }[] = [];
      await Promise.all(
        plans.map(async (p, j) => {
          const done = appended[j]!;
          if (done instanceof VersionConflictError) return void conflicted.push(p.i);
          await this.projectState(p.next, done.nextVersion, [...p.stored, ...p.events.map((e, k) => ({ version: p.version + 1 + k, data: e.data }))]);
          stored.push({ p, events: done.events });
        }),
      );
      const eventSeq = await this.deps.publisher.publishMany(stored.flatMap(({ events }) => events));
      for (const { p } of stored) results[p.i] = { before: p.before, state: p.next, applied: true, ...(eventSeq !== undefined ? { eventSeq } : {}) };
      todo = conflicted.sort((a, b) => a - b);
      if (todo.length > 0) await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
    }
    return results as (Executed | { error: MemexError })[];
  }

  /**
   * Creates memos of one project together: each item opened under its own memo's key, its
   * reference id claimed (of items naming one reference id, the first gets it and the others
   * `ReferenceIdTaken`), then all decided and appended by `executeBatch` under their own command
   * ids, so a repeated command is answered as its first run was. Refusals are per item, in order.
   */
  async createMany(projectId: string, items: readonly CreateBatchItem[]): Promise<{ results: CreateBatchOutcome[]; eventSeq?: number }> {
    const { keyring, references } = this.deps;
    const refused = new Map<number, WireError>();
    const inputs = await Promise.all(
      items.map((item, i) =>
        keyring.openJson<StoredCreateInput>(projectId, item.memoId, item.sealed).catch((error: unknown) => {
          refused.set(i, wireError(error));
          return undefined;
        }),
      ),
    );
    const holder = new Map<string, number>();
    inputs.forEach((input, i) => {
      if (!input || input.referenceId === null) return;
      const first = holder.get(input.referenceId);
      if (first === undefined) holder.set(input.referenceId, i);
      else if (items[first]!.memoId !== items[i]!.memoId) refused.set(i, new MemexError('ReferenceIdTaken').toWire());
    });
    await Promise.all(
      [...holder.values()].map((i) =>
        references.claim(projectId, inputs[i]!.referenceId!, items[i]!.memoId).catch((error: unknown) => {
          refused.set(i, wireError(error));
        }),
      ),
    );
    const todo = items.flatMap((item, i) => (inputs[i] && !refused.has(i) ? [{ item, i, input: inputs[i] }] : []));
    const done = await this.executeBatch(
      todo.map(({ item, i, input }) => ({
        at: i,
        projectId,
        memoId: item.memoId,
        commandId: item.commandId,
        ...(item.requestId ? { requestId: item.requestId } : {}),
        command: (now: string): MemoCommand => ({ type: 'CreateMemo', memoId: item.memoId, projectId, input, now }),
      })),
      { failpoint: 'memo.after-append' },
    );
    let eventSeq: number | undefined;
    done.forEach((outcome, k) => {
      const { i } = todo[k]!;
      if ('error' in outcome) return void refused.set(i, outcome.error.toWire());
      if (outcome.eventSeq !== undefined) eventSeq = Math.max(eventSeq ?? 0, outcome.eventSeq);
    });
    const results = items.map((item, i): CreateBatchOutcome => {
      const error = refused.get(i);
      return error ? { error } : { memoId: item.memoId };
    });
    return { results, ...(eventSeq !== undefined ? { eventSeq } : {}) };
  }

  /** The read model's record of the memo a route addresses, in the caller's project for reference ids, anywhere for UUIDs. */
  async find(projectId: string, ref: MemoRef, space: readonly Filter[] = []): Promise<MemoRecord> {
    const record =
      ref.idType === 'memo_uuid'
        ? isUuid(ref.id)
          ? await this.deps.readModel.get(ref.id.toLowerCase())
          : undefined
        : await this.deps.readModel.findByReference(projectId, ref.id);
    if (!record) throw new MemexError('MemoNotFound');
    // Outside the caller's knowledge space a memo of its project does not exist for it.
    if (space.length > 0 && record.projectId === projectId && !matchesFilters(filterable(record.memo), space)) throw new MemexError('MemoNotFound');
    return record;
  }

  /** Finds the memo a route addresses (see `find`): its id, owner and reference id. */
  async resolve(projectId: string, ref: MemoRef, space: readonly Filter[] = []): Promise<{ memoId: string; ownerProjectId: string; referenceId: string | null }> {
    const record = await this.find(projectId, ref, space);
    return { memoId: record.memo.uuid, ownerProjectId: record.projectId, referenceId: record.memo.client_reference_id };
  }

  /**
   * The memo of a read-model record with its content reference whole: inline content the record
   * keeps by event (see `toStoredMemo`) read back from that event. Undefined if the memo was erased
   * since the record was read.
   */
  async withContent(record: MemoRecord): Promise<MemoView | undefined> {
    const { memo } = record;
    const version = memo.content_ref.event;
    if (version === undefined) return memo;
    const stream = memoStream(record.projectId, memo.uuid);
    const key = `${stream}#${version}`;
    const kept = this.contentRefs.get(key);
    if (kept) return { ...memo, content_ref: kept };
    try {
      const event = await this.deps.store.readEvent(stream, version);
      const content = (event?.data as { content?: ContentRef } | undefined)?.content;
      if (content?.inline === undefined) return undefined;
      this.contentRefs.keep(key, content as InlineContentRef);
      return { ...memo, content_ref: content };
    } catch (error) {
      if (error instanceof KeyErasedError) return undefined;
      throw error;
    }
  }

  /**
   * Erases a memo: the stream down to a tombstone, the read model row, the reference claim, the
   * content blob; the outbox then purges the bus and shreds the key. `reason: 'expired'` only
   * erases a memo whose expiration date has passed.
   */
  async erase(
    projectId: string,
    memoId: string,
    reason: ErasureReason,
    ctx: Pick<CommandContext, 'commandId' | 'requestId'>,
  ): Promise<Executed> {
    const done = await this.execute(projectId, memoId, (now) => ({ type: 'DeleteMemo', projectId, reason, now }), ctx, { erase: true });
    const { before } = done;
    if (done.applied && before.status === 'active') {
      if (before.memo.clientReferenceId !== null) {
        await this.deps.references.release(projectId, before.memo.clientReferenceId, memoId, { erase: true });
      }
      await this.deps.content.remove(before.memo.content).catch((error: unknown) => {
        this.deps.logger.warn({ err: error, memoId }, 'content blob of an erased memo not removed (sealed; its key is shredded)');
      });
    }
    return done;
  }

  handlers(): CommandHandlers {
    const { references, keyring } = this.deps;
    const seq = (e: Executed) => (e.eventSeq !== undefined ? { eventSeq: e.eventSeq } : {});
    return {
      create: async ({ projectId, memoId, sealed }, ctx) => {
        // A batch of one: the same decisions, refusals thrown as `create` always answered them.
        const item = { memoId, sealed, commandId: ctx.commandId, ...(ctx.requestId ? { requestId: ctx.requestId } : {}) };
        const { results, eventSeq } = await this.createMany(projectId, [item]);
        const outcome = results[0]!;
        if ('error' in outcome) throw MemexError.fromWire(outcome.error);
        return { result: { memoId }, ...(eventSeq !== undefined ? { eventSeq } : {}) };
      },

      'create-batch': async ({ projectId, items }) => {
        const { results, eventSeq } = await this.createMany(projectId, items);
        return { result: { results }, ...(eventSeq !== undefined ? { eventSeq } : {}) };
      },

      update: async ({ projectId, memoId, sealed }, ctx) => {
        const { ownerProjectId, referenceId } = await this.resolve(projectId, { idType: 'memo_uuid', id: memoId });
        if (ownerProjectId !== projectId) throw new MemexError('ResourceNotInProject');
        const input = await keyring.openJson<StoredUpdateInput>(projectId, memoId, sealed);
        const newReference = input.clientReferenceId;
        const changesReference = newReference !== undefined && newReference !== referenceId;
        if (changesReference && newReference !== null) await references.claim(projectId, newReference, memoId);
        const done = await this.execute(ownerProjectId, memoId, (now) => ({ type: 'UpdateMemo', projectId, input, now }), ctx);
        // Release what the memo held when the update was decided, not what the read model said before.
        const oldReference = done.before.status === 'active' ? done.before.memo.clientReferenceId : null;
        if (done.applied && oldReference !== null && newReference !== undefined && oldReference !== newReference) {
          await references.release(projectId, oldReference, memoId);
        }
        // The replaced revision's blob goes (consumers still on it find it gone and skip: their result would be dropped).
        if (done.applied && done.before.status === 'active' && done.state.status === 'active' && done.before.memo.content.blob && done.before.memo.content.blob.name !== done.state.memo.content.blob?.name) {
          await this.deps.content.remove(done.before.memo.content).catch(() => undefined);
        }
        return { result: { memoId }, ...seq(done) };
      },

      delete: async ({ projectId, memoId, reason = 'deleted' }, ctx) => {
        const { ownerProjectId } = await this.resolve(projectId, { idType: 'memo_uuid', id: memoId });
        if (ownerProjectId !== projectId) throw new MemexError('ResourceNotInProject');
        const done = await this.erase(projectId, memoId, reason, ctx);
        return { result: { memoId }, ...seq(done) };
      },

      'record-chunks': async ({ projectId, memoId, revision, model, chunks, sealed }, ctx) => {
        const { firstChunk } = await keyring.openJson<ChunkPreview>(projectId, memoId, sealed);
        const done = await this.execute(
          projectId,
          memoId,
          (now) => ({ type: 'RecordChunks', projectId, revision, model, chunks, firstChunk, now }),
          ctx,
        );
        return { result: { applied: done.applied }, ...seq(done) };
      },

      'record-summary': async ({ projectId, memoId, revision, sealed, replace }, ctx) => {
        const { summary, tags, source, reason } = await keyring.openJson<SummaryResult>(projectId, memoId, sealed);
        const origin = { ...(source !== undefined ? { source } : {}), ...(reason !== undefined ? { reason } : {}), ...(replace ? { replace } : {}) };
        const done = await this.execute(
          projectId,
          memoId,
          (now) => ({ type: 'RecordSummary', projectId, revision, summary, tags, ...origin, now, tagsApart: this.deps.compact === false }),
          ctx,
        );
        return { result: { applied: done.applied }, ...seq(done) };
      },

      'record-chunks-batch': async ({ items }, ctx) => {
        const opened = await Promise.all(items.map((item) => openItem(() => keyring.openJson<ChunkPreview>(item.projectId, item.memoId, item.sealed))));
        const done = await this.executeBatch(
          items.flatMap(({ projectId, memoId, revision, model, chunks }, i) => {
            const preview = opened[i]!;
            return preview instanceof MemexError ? [] : [{ at: i, projectId, memoId, command: (now: string): MemoCommand => ({ type: 'RecordChunks', projectId, revision, model, chunks, firstChunk: preview.firstChunk, now }) }];
          }),
          ctx,
        );
        return batchReply(opened, done);
      },

      'record-summary-batch': async ({ items }, ctx) => {
        const opened = await Promise.all(items.map((item) => openItem(() => keyring.openJson<SummaryResult>(item.projectId, item.memoId, item.sealed))));
        const done = await this.executeBatch(
          items.flatMap(({ projectId, memoId, revision, replace }, i) => {
            const result = opened[i]!;
            if (result instanceof MemexError) return [];
            const { summary, tags, source, reason } = result;
            const origin = { ...(source !== undefined ? { source } : {}), ...(reason !== undefined ? { reason } : {}), ...(replace ? { replace } : {}) };
            return [{ at: i, projectId, memoId, command: (now: string): MemoCommand => ({ type: 'RecordSummary', projectId, revision, summary, tags, ...origin, now, tagsApart: this.deps.compact === false }) }];
          }),
          ctx,
        );
        return batchReply(opened, done);
      },

      'record-processing-failure': async ({ projectId, memoId, revision, stage, message }, ctx) => {
        const done = await this.execute(
          projectId,
          memoId,
          (now) => ({ type: 'RecordProcessingFailure', projectId, revision, stage, message, now }),
          ctx,
        );
        if (done.applied) this.deps.logger.error({ memoId, revision, stage, message }, 'memo processing failed');
        return { result: { applied: done.applied }, ...seq(done) };
      },

      'record-extraction': async ({ projectId, memoId, blob, content }, ctx) => {
        const done = await this.execute(projectId, memoId, (now) => ({ type: 'RecordExtraction', projectId, blob, content, now }), ctx);
        return { result: { applied: done.applied }, ...seq(done) };
      },
    };
  }
}

/** What refuses one item of a batch alone (replied with its error, not retried): our errors, and an erased key. */
function refusal(error: unknown): MemexError | undefined {
  if (error instanceof MemexError) return error;
  if (error instanceof KeyErasedError) return new MemexError('MemoNotFound', undefined, { cause: error });
  return undefined;
}

/** A batch item's sealed part opened, or the error that refuses it alone. */
async function openItem<T>(open: () => Promise<T>): Promise<T | MemexError> {
  try {
    return await open();
  } catch (error) {
    const refused = refusal(error);
    if (!refused) throw error;
    return refused;
  }
}

/**
 * A batch command's reply from its items as opened (a `MemexError` for those refused before they
 * ran) and what `executeBatch` did with the others, in order; `eventSeq` is the highest published.
 */
function batchReply(opened: readonly unknown[], done: readonly (Executed | { error: MemexError })[]): { result: { results: BatchItemResult[] }; eventSeq?: number } {
  let at = 0;
  let eventSeq: number | undefined;
  const results = opened.map((item): BatchItemResult => {
    const outcome = item instanceof MemexError ? { error: item } : done[at++]!;
    if ('error' in outcome) return { ok: false, error: outcome.error.toWire() };
    if (outcome.eventSeq !== undefined) eventSeq = Math.max(eventSeq ?? 0, outcome.eventSeq);
    return { ok: true, applied: outcome.applied };
  });
  return { result: { results }, ...(eventSeq !== undefined ? { eventSeq } : {}) };
}

/** An item's refusal as `create` would have answered it; anything unexpected fails the whole command (retried). */
function wireError(error: unknown): WireError {
  const refused = refusal(error);
  if (!refused) throw error;
  return refused.toWire();
}

function onlyOne(events: NewEvent[]): NewEvent {
  if (events.length !== 1) throw new Error(`erasure takes exactly one tombstone event, got ${events.length}`);
  return events[0]!;
}
