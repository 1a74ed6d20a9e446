import { randomUUID } from 'node:crypto';
import { MemexError, parseCreateMemoBody, type ContentRef, type CreateBatchItem, type CreateMemoInput, type Filter, type StoredCreateInput } from '@memex/contracts';
import { SEAL_FOR_TRANSIT, natsConnected, payloadBudget } from '@memex/runtime';
import { createInSpace } from '../auth/space';
import type { GatewayDeps } from '../http/context';
import type { CreateCoalescer } from '../http/createCoalescer';
import { WriteBudget } from '../http/writeBudget';

/** A memo to create: its id (fresh, or from an Idempotency-Key) and its parsed body. */
export interface NewMemo {
  memoId: string;
  input: CreateMemoInput;
  /** The create's command id (a repeat answers as the first run did); fresh when absent. */
  commandId?: string;
}

/** A memo's outcome: created, or the error its POST /api/v1/memo would have failed with. */
export type Created = { ok: true; memoId: string } | { ok: false; error: unknown };

/** What a command's envelope and headers take beside its items. */
const ENVELOPE_BYTES = 8 * 1024;

/**
 * A POST /api/v1/memo body as the caller may create it: parsed, then stamped into the caller's
 * knowledge space (a body that contradicts the space is Access denied). Throws what the POST answers.
 */
export function createMemoInput(deps: GatewayDeps, space: readonly Filter[], body: unknown): CreateMemoInput {
  return createInSpace(space, parseCreateMemoBody(body, { maxContentBytes: deps.config.MEMEX_MAX_CONTENT_BYTES }));
}

/**
 * Writes memos as every create does: their keys (pipelined), their contents sealed into the blob
 * store (together; claim-check), then the creates, sealed under each memo's key. A lone memo goes
 * through `coalescer` (sharing a `create-batch` with concurrent ones), or without one as `create`;
 * more go as `create-batch` commands of as many memos as fit a NATS message, sent at once. One memo's refusal fails no other; a memo refused takes its blob with it. All within
 * one MEMEX_COMMAND_TIMEOUT_MS budget; a failure before the commands (keys, blobs) throws.
 */
export async function createMemos(
  deps: GatewayDeps,
  target: { projectId: string; requestId: string },
  memos: readonly NewMemo[],
  coalescer?: CreateCoalescer,
): Promise<Created[]> {
  const { content, commands, config } = deps;
  const { keyring } = content;
  const { projectId, requestId } = target;
  const budget = new WriteBudget(config.MEMEX_COMMAND_TIMEOUT_MS, () => natsConnected(deps.nc));
  await budget.retry(() => keyring.createMany(projectId, memos.map((m) => m.memoId)));
  const writes = await Promise.allSettled(
    memos.map((m) => budget.retry(() => content.write(projectId, m.memoId, m.input.content), (late) => content.remove(late))),
  );
  const refs = writes.map((w) => (w.status === 'fulfilled' ? w.value : undefined));
  const removeBlobs = (which: (i: number) => boolean) =>
    Promise.all(refs.map((ref, i) => (which(i) ? content.remove(ref).catch(() => undefined) : undefined)));
  const failed = writes.find((w): w is PromiseRejectedResult => w.status === 'rejected');
  if (failed) {
    await removeBlobs(() => true);
    throw failed.reason;
  }
  const items = await Promise.all(
    memos.map(async (m, i): Promise<CreateBatchItem> => {
      const stored: StoredCreateInput = { ...m.input, content: refs[i] as ContentRef };
      const sealed = await keyring.sealJson(projectId, m.memoId, stored, SEAL_FOR_TRANSIT);
      return { memoId: m.memoId, sealed, commandId: m.commandId ?? randomUUID(), requestId };
    }),
  );

  const outcomes: Created[] = [];
  if (items.length === 1) {
    const [item] = items as [CreateBatchItem];
    try {
      if (coalescer) {
        const outcome = await coalescer.create(projectId, item, { requestId, timeoutMs: budget.left() });
        outcomes.push('error' in outcome ? { ok: false, error: MemexError.fromWire(outcome.error) } : { ok: true, memoId: item.memoId });
      } else {
        await commands.send('create', { projectId, memoId: item.memoId, sealed: item.sealed }, { requestId, timeoutMs: budget.left(), ...(memos[0]!.commandId ? { commandId: item.commandId } : {}) });
        outcomes.push({ ok: true, memoId: item.memoId });
      }
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  } else {
    await Promise.all(
      inCommands(items, payloadBudget(deps.nc) - ENVELOPE_BYTES).map(async ({ start, group }) => {
        try {
          const { result } = await commands.send('create-batch', { projectId, items: group }, { requestId, timeoutMs: budget.left() });
          result.results.forEach((r, k) => {
            outcomes[start + k] = 'error' in r ? { ok: false, error: MemexError.fromWire(r.error) } : { ok: true, memoId: r.memoId };
          });
        } catch (error) {
          group.forEach((_, k) => (outcomes[start + k] = { ok: false, error }));
        }
      }),
    );
  }
  // A memo refused takes its blob with it. One whose outcome is unknown (a timeout: the memo service
  // may have appended it before it died) keeps it, so a retry's answer never points at a removed blob.
  await removeBlobs((i) => {
    const outcome = outcomes[i]!;
    return !outcome.ok && outcome.error instanceof MemexError && outcome.error.status < 500;
  });
  return outcomes;
}

/** Consecutive runs of items whose JSON fits `bytes` (an item alone always makes a run: it fit a create). */
function inCommands(items: readonly CreateBatchItem[], bytes: number): { start: number; group: CreateBatchItem[] }[] {
  const runs: { start: number; group: CreateBatchItem[] }[] = [];
  let size = 0;
  items.forEach((item, i) => {
    const itemBytes = Buffer.byteLength(JSON.stringify(item)) + 1;
    const last = runs.at(-1);
    if (last && size + itemBytes <= bytes) {
      last.group.push(item);
      size += itemBytes;
    } else {
      runs.push({ start: i, group: [item] });
      size = itemBytes;
    }
  });
  return runs;
}
