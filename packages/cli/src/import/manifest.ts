import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ERRORS } from '@memex/contracts';

/** The manifest's first line: which run it records, of what input, into which project. */
interface ManifestHead {
  manifest: 1;
  run: string;
  input: string;
  project_id: string | null;
  started_at: string;
}

/** A batch about to be sent, under its idempotency key; written before the request goes out. */
interface BatchLine {
  batch: string;
  items: string[];
}

/** An item's outcome: created (with its memo) or refused (retried by a later --resume). */
type OutcomeLine = { item: string; memo_uuid: string } | { item: string; status: number; error: string };

/**
 * A refusal that says nothing about the memo (rate limited, unavailable, timed out): it may have been
 * created after all, so only the same batch under the same key may ask again.
 */
export function transient(status: number): boolean {
  return status === 429 || status >= 500;
}

export interface ManifestState {
  head: ManifestHead;
  /** Items created, by any run of this import. */
  created: Map<string, string>;
  /** Batches sent with an item whose outcome was never recorded, or was transient, in sending order. */
  unsettled: BatchLine[];
}

/**
 * The import manifest: an append-only NDJSON file. Each batch is written with its idempotency key
 * before it is sent, and each item's outcome as it comes back, so a run killed at any point leaves
 * enough for `--resume` to skip what was created and to send an unanswered batch again under the
 * same key (the server then answers the memos it created, creating none twice, within
 * MEMEX_IDEMPOTENCY_TTL_MS).
 */
export class Manifest {
  private constructor(readonly path: string, readonly state: ManifestState) {}

  static create(path: string, head: Omit<ManifestHead, 'manifest'>): Manifest {
    const full: ManifestHead = { manifest: 1, ...head };
    writeFileSync(path, `${JSON.stringify(full)}\n`, { flag: 'wx' });
    return new Manifest(path, { head: full, created: new Map(), unsettled: [] });
  }

  static exists(path: string): boolean {
    return existsSync(path);
  }

  /** Reads a manifest; a last line cut short by a crash is ignored. */
  static open(path: string): Manifest {
    const lines = readFileSync(path, 'utf8').split('\n');
    let head: ManifestHead | undefined;
    const created = new Map<string, string>();
    const settled = new Set<string>();
    const batches: BatchLine[] = [];
    for (const raw of lines) {
      if (raw.trim() === '') continue;
      let line: ManifestHead | BatchLine | OutcomeLine;
      try {
        line = JSON.parse(raw) as typeof line;
      } catch {
        continue;
      }
      if ('manifest' in line) head = line;
      else if ('batch' in line) batches.push(line);
      else {
        if ('memo_uuid' in line) created.set(line.item, line.memo_uuid);
        // A batch whose key the server holds for another body (its lines were edited) keeps that key:
        // it may have created the memos before, so it is never sent again under a new one.
        if ('memo_uuid' in line || !(transient(line.status) || line.error === ERRORS.IdempotencyKeyReused.text)) settled.add(line.item);
        else settled.delete(line.item);
      }
    }
    if (!head) throw new Error(`${path} is not an import manifest`);
    const unsettled = batches.filter((b) => b.items.some((item) => !settled.has(item)));
    return new Manifest(path, { head, created, unsettled });
  }

  /** Records a batch before it is sent. */
  sending(batch: string, items: readonly string[]): void {
    this.append({ batch, items: [...items] });
  }

  created(item: string, memoUuid: string): void {
    this.state.created.set(item, memoUuid);
    this.append({ item, memo_uuid: memoUuid });
  }

  refused(item: string, status: number, error: string): void {
    this.append({ item, status, error });
  }

  private append(line: BatchLine | OutcomeLine): void {
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
  }
}
