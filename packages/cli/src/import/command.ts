import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { MAX_BATCH_MEMOS, MemexApiError, type CreateMemoBody, type CreateMemosItem, type MemexClient } from '@memex/client';
import { ERRORS } from '@memex/contracts';
import { cliClient } from '../client';
import { USAGE, options } from '../options';
import { Manifest, transient } from './manifest';
import { Progress, type ProgressFigures } from './progress';
import { describeItem, folderItems, itemPlace, ndjsonItems, type ImportItem } from './sources';

const DEFAULT_BATCH_SIZE = 256;
const DEFAULT_CONCURRENCY = 4;
/** The pause between two passes of --wait over the memo list. */
const WAIT_POLL_MS = 500;
/** Times a batch with transiently refused memos is sent again, whole and under its key, and the first pause. */
const TRANSIENT_RETRIES = 3;
const TRANSIENT_PAUSE_MS = 1_000;
/** Retries of one request answered 429 or 503 (each after Retry-After, at most 60 s). */
const RATE_LIMIT_RETRIES = 20;
const MAX_RETRY_DELAY_MS = 60_000;

/** What one request sends: memos for the batch route, or one file to upload, under one idempotency key. */
interface Unit {
  key: string;
  items: ImportItem[];
}

interface Refusal {
  item: string;
  status: number;
  error: string;
}

/** A whole request refused for want of access: no later request would fare better. */
const fatal = (error: unknown) => !(error instanceof MemexApiError) || error.status === 401 || error.status === 403 || error.status === 429 || error.status >= 500;

function positiveInt(value: string | undefined, flag: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${flag} must be an integer from 1 to ${max}`);
  return n;
}

/**
 * `memex import [--project ID] <file.ndjson | folder>`: NDJSON lines (each a POST /api/v1/memo
 * body) through the batch route, or a folder's files uploaded one per request, `--concurrency`
 * requests at a time. An import manifest beside the input records every batch before it is sent and
 * every outcome after, so `--resume` skips what any earlier run created and creates nothing twice.
 * Exits 0 when every item was created (and, with --wait, processed), 1 otherwise, 2 on usage.
 */
export async function runImport(args: string[]): Promise<number> {
  const { values, positionals } = options(args, {
    key: { type: 'string' },
    insecure: { type: 'boolean', short: 'k' },
    project: { type: 'string' },
    batch_size: { type: 'string' },
    concurrency: { type: 'string' },
    manifest: { type: 'string' },
    resume: { type: 'boolean' },
    wait: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) {
    console.error(`memex import takes one NDJSON file or folder\n\n${USAGE}`);
    return 2;
  }
  const batchSize = positiveInt(values.batch_size, 'batch_size', DEFAULT_BATCH_SIZE, MAX_BATCH_MEMOS);
  const concurrency = positiveInt(values.concurrency, 'concurrency', DEFAULT_CONCURRENCY, 256);
  const input = resolve(positionals[0]!);
  const folder = statSync(input, { throwIfNoEntry: false });
  if (!folder) throw new Error(`cannot read ${positionals[0]}: no such file or folder`);
  const manifestPath = resolve(values.manifest ?? `${input.replace(/\/+$/, '')}.memex-import`);
  const progress = new Progress(values.json ? 'json' : process.stderr.isTTY ? 'bar' : 'lines');
  // A bulk import meets the project's rate limit by design: it waits out Retry-After rather than
  // stop, and the progress report shows each wait the client takes.
  const client = cliClient(values).with({
    ...(values.project ? { projectId: values.project } : {}),
    maxRetries: RATE_LIMIT_RETRIES,
    maxRetryDelayMs: MAX_RETRY_DELAY_MS,
    onRetry: (status, delayMs) => progress.rateLimited(delayMs, status),
  });

  let manifest: Manifest;
  if (Manifest.exists(manifestPath)) {
    if (!values.resume) throw new Error(`an import manifest exists at ${manifestPath}: pass --resume to continue that import, or remove it to import again`);
    manifest = Manifest.open(manifestPath);
    if (manifest.state.head.project_id !== (values.project ?? null)) throw new Error(`${manifestPath} records an import into project ${manifest.state.head.project_id ?? '(the key’s own)'}; pass the same --project`);
  } else {
    manifest = Manifest.create(manifestPath, { run: randomUUID(), input, project_id: values.project ?? null, started_at: new Date().toISOString() });
  }

  const items = folder.isDirectory() ? folderItems(input, new Set([manifestPath])) : ndjsonItems(input);
  const byItem = new Map(items.map((i) => [i.item, i]));
  const skipped = items.filter((i) => manifest.state.created.has(i.item)).length;
  const refused: Refusal[] = items.flatMap((i) => (i.kind === 'invalid' ? [{ item: i.item, status: i.status, error: i.error }] : []));

  // Unanswered batches go again first, whole and under their own keys; then what no run has sent.
  const units: Unit[] = [];
  const queued = new Set<string>();
  for (const batch of manifest.state.unsettled) {
    const present = batch.items.map((id) => byItem.get(id)).filter((i): i is ImportItem => i !== undefined && i.kind !== 'invalid');
    if (present.length === 0) continue;
    units.push({ key: batch.batch, items: present });
    for (const i of present) queued.add(i.item);
  }
  const fresh = items.filter((i) => i.kind !== 'invalid' && !manifest.state.created.has(i.item) && !queued.has(i.item));
  const files = fresh.filter((i) => i.kind === 'file');
  const memos = fresh.filter((i) => i.kind === 'memo');
  for (const file of files) units.push({ key: `memex-import-${randomUUID()}`, items: [file] });
  for (let i = 0; i < memos.length; i += batchSize) units.push({ key: `memex-import-${randomUUID()}`, items: memos.slice(i, i + batchSize) });

  const figures: ProgressFigures = { phase: 'import', done: skipped + refused.length, total: items.length, doneThisRun: 0, startedAt: Date.now() };
  let created = 0;
  let single = false;
  let stopped: unknown;
  // Ctrl-C stops the import cleanly: requests in flight are abandoned (the manifest has them as
  // sent, so --resume sends them again under their keys) and the summary says how far it got.
  // A second Ctrl-C exits at once.
  const abort = new AbortController();
  const { signal } = abort;
  // Every request in flight and every retry pause listens to it: no leak, so no limit.
  setMaxListeners(0, signal);
  const interrupted = new Error('interrupted (Ctrl-C)');
  const onSigint = () => {
    if (signal.aborted) process.exit(130);
    stopped ??= interrupted;
    abort.abort();
  };
  process.on('SIGINT', onSigint);

  const settle = (results: { item: string; result: CreateMemosItem }[]) => {
    for (const { item, result } of results) {
      if (result.ok) {
        manifest.created(item, result.memo_uuid);
        created++;
      } else {
        manifest.refused(item, result.status, result.error);
        refused.push({ item, status: result.status, error: result.error });
      }
    }
    figures.done += results.length;
    figures.doneThisRun += results.length;
    progress.update(figures);
  };

  /** Sends one unit; a whole request refused (not for access) refuses its items, and a 413 splits it. */
  const send = async (unit: Unit): Promise<void> => {
    manifest.sending(unit.key, unit.items.map((i) => i.item));
    const first = unit.items[0]!;
    try {
      if (first.kind === 'file') {
        const { memo_uuid } = await client.uploadMemo(new Blob([readFileSync(first.path)]), first.name, {}, { idempotencyKey: unit.key, signal });
        return settle([{ item: first.item, result: { ok: true, memo_uuid } }]);
      }
      const bodies = unit.items.map((i) => (i as { body: CreateMemoBody }).body);
      const batched = !single;
      try {
        let results = batched ? await client.createMemos(bodies, { idempotencyKey: unit.key, batchSize: MAX_BATCH_MEMOS, signal }) : await oneByOne(client, bodies, unit.key, signal);
        // Same key, same body: the server answers what it created and tries the rest again.
        for (let retry = 0; batched && retry < TRANSIENT_RETRIES && results.some((r) => !r.ok && transient(r.status)); retry++) {
          await new Promise((r) => setTimeout(r, TRANSIENT_PAUSE_MS * 2 ** retry));
          results = await client.createMemos(bodies, { idempotencyKey: unit.key, batchSize: MAX_BATCH_MEMOS, signal });
        }
        settle(unit.items.map((i, n) => ({ item: i.item, result: results[n]! })));
      } catch (error) {
        if (!(batched && error instanceof MemexApiError && error.status === 404 && error.message === ERRORS.NotFound.text)) throw error;
        // An older server without the batch route: one POST per memo, each under `<key>.<n>`.
        if (!single) console.error('memex: the server has no batch route (POST /api/v1/memo/batch answered 404); importing one memo per request');
        single = true;
        const results = await oneByOne(client, bodies, unit.key, signal);
        settle(unit.items.map((i, n) => ({ item: i.item, result: results[n]! })));
      }
    } catch (error) {
      if (error instanceof MemexApiError && error.status === 413 && unit.items.length > 1) {
        const half = Math.ceil(unit.items.length / 2);
        await send({ key: `memex-import-${randomUUID()}`, items: unit.items.slice(0, half) });
        return send({ key: `memex-import-${randomUUID()}`, items: unit.items.slice(half) });
      }
      if (fatal(error)) throw error;
      const { status, message } = error as MemexApiError;
      settle(unit.items.map((i) => ({ item: i.item, result: { ok: false, status, error: message } })));
    }
  };

  progress.update(figures, true);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, units.length) }, async () => {
      while (stopped === undefined && next < units.length) {
        const unit = units[next++]!;
        try {
          await send(unit);
        } catch (error) {
          stopped ??= error;
        }
      }
    }),
  );
  progress.update(figures, true);
  progress.finish();
  const seconds = (Date.now() - figures.startedAt) / 1000;

  let failed: { item: string; memo_uuid: string; error_reason: string | null }[] = [];
  let processed = 0;
  let waited = false;
  if (values.wait && stopped === undefined) {
    try {
      ({ processed, failed } = await waitProcessed(client, items, manifest, progress, signal));
      waited = true;
    } catch (error) {
      progress.finish();
      stopped ??= error;
    }
  }
  process.off('SIGINT', onSigint);

  const order = new Map(items.map((i, n) => [i.item, n]));
  refused.sort((a, b) => (order.get(a.item) ?? 0) - (order.get(b.item) ?? 0));
  const summary = {
    type: 'summary',
    input,
    manifest: manifestPath,
    total: items.length,
    created,
    skipped,
    refused: refused.map((r) => ({ ...itemPlace(r.item), status: r.status, error: r.error })),
    seconds: Number(seconds.toFixed(1)),
    memos_per_s: Number((figures.doneThisRun / Math.max(seconds, 0.001)).toFixed(1)),
    ...(waited ? { processed, failed: failed.map((f) => ({ ...itemPlace(f.item), memo_uuid: f.memo_uuid, error_reason: f.error_reason })) } : {}),
    ...(stopped === undefined ? {} : { error: (stopped as Error).message }),
  };
  if (values.json) console.log(JSON.stringify(summary));
  else {
    console.log(`${stopped === undefined ? 'imported' : 'stopped'} ${input}: ${items.length} items in ${summary.seconds} s (${summary.memos_per_s} memos/s): ${created} created, ${skipped} created by an earlier run, ${refused.length} refused`);
    if (refused.length > 0) {
      console.log('refused:');
      for (const r of refused) console.log(`  ${describeItem(r.item)}: ${r.status} ${r.error}`);
    }
    if (summary.processed !== undefined) {
      console.log(`processed: ${processed}, failed: ${failed.length}`);
      for (const f of failed) console.log(`  ${describeItem(f.item)} (${f.memo_uuid}): ${f.error_reason ?? 'error'}`);
    }
    console.log(`manifest: ${manifestPath}`);
  }
  if (stopped !== undefined) {
    console.error(`memex: import stopped: ${(stopped as Error).message}\nmemex import --resume continues it; nothing created is created twice`);
    return stopped === interrupted ? 130 : 1;
  }
  return refused.length > 0 || failed.length > 0 ? 1 : 0;
}

/** The batch route's results from one POST per memo (servers without it), each under `<key>.<n>`. */
async function oneByOne(client: MemexClient, bodies: CreateMemoBody[], key: string, signal: AbortSignal): Promise<CreateMemosItem[]> {
  const results: CreateMemosItem[] = [];
  for (const [n, body] of bodies.entries()) {
    try {
      results.push(await client.createMemo(body, { idempotencyKey: `${key}.${n}`, signal }));
    } catch (error) {
      if (fatal(error)) throw error;
      results.push({ ok: false, status: (error as MemexApiError).status, error: (error as MemexApiError).message });
    }
  }
  return results;
}

/**
 * Waits until no memo the import created is `processing`; those in `error` come back with their
 * reason. It reads the memo list, 100 a page, newest first: an import's memos are the project's
 * newest, so a pass costs about one request per 100 memos, not one per memo. A memo a pass did not
 * find in the list (moved between pages by other writes, or deleted) is asked for by its status.
 */
async function waitProcessed(client: MemexClient, items: ImportItem[], manifest: Manifest, progress: Progress, signal: AbortSignal) {
  const waiting = new Map<string, { item: string; memo_uuid: string }>();
  for (const i of items) {
    const memoUuid = manifest.state.created.get(i.item);
    if (memoUuid) waiting.set(memoUuid, { item: i.item, memo_uuid: memoUuid });
  }
  const figures: ProgressFigures = { phase: 'wait', done: 0, total: waiting.size, doneThisRun: 0, startedAt: Date.now() };
  const failed: { item: string; memo_uuid: string; error_reason: string | null }[] = [];
  const settle = async (memoUuid: string, status: 'processing' | 'processed' | 'error', reason?: string | null) => {
    if (status === 'processing') return;
    const memo = waiting.get(memoUuid)!;
    waiting.delete(memoUuid);
    if (status === 'error') failed.push({ ...memo, error_reason: reason !== undefined ? reason : (await client.getMemoStatus(memoUuid, { signal })).error_reason });
    figures.done++;
    figures.doneThisRun++;
  };
  progress.update(figures, true);
  while (waiting.size > 0) {
    const unseen = new Set(waiting.keys());
    for (let page = 1; unseen.size > 0; page++) {
      const list = await client.listMemos({ page, page_size: 100 }, { signal });
      for (const row of list.results) if (unseen.delete(row.uuid)) await settle(row.uuid, row.processing_status);
      progress.update(figures);
      if (page >= list.total_pages) break;
    }
    for (const memoUuid of unseen) {
      try {
        const status = await client.getMemoStatus(memoUuid, { signal });
        await settle(memoUuid, status.status, status.error_reason);
      } catch (error) {
        if (!(error instanceof MemexApiError && error.status === 404)) throw error;
        await settle(memoUuid, 'error', `${error.status} ${error.message}`);
      }
    }
    progress.update(figures);
    signal.throwIfAborted();
    if (waiting.size > 0) await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
  }
  progress.update(figures, true);
  progress.finish();
  return { processed: figures.done - failed.length, failed };
}
