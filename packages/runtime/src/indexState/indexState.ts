import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets } from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';

/**
 * Which embedding model the index serves, shared by every indexer instance through NATS KV. A
 * re-index names a target model: instances write new chunks under both models while one of them
 * (the owner, kept alive by a heartbeat) replays the event log into the target, then switches
 * `activeModel` in one compare-and-set.
 */
export interface IndexState {
  activeModel: string;
  reindex?: {
    model: string;
    requestedAt: string;
    owner?: string;
    heartbeatAt?: string;
    /** Replays the log into the active model itself (`model` is the active one): catalog and chunks. */
    rebuild?: boolean;
    /** How far the replay is in the memo event log (a position), and where the log ended when it began. */
    replayed?: number;
    total?: number;
  };
  /** The last re-index that could not run (its model would not load), for the CLI to report. */
  failed?: { model: string; error: string; at: string };
}

const KEY = 'state';

/** A re-index owner that has not beaten its heart for this long is presumed dead; another instance takes over. */
export const REINDEX_OWNER_TIMEOUT_MS = 30_000;

/** Whether the job's owner has gone quiet for longer than REINDEX_OWNER_TIMEOUT_MS (`now`: epoch ms). */
export function reindexOwnerSilent(job: NonNullable<IndexState['reindex']>, now: number): boolean {
  return job.owner !== undefined && (job.heartbeatAt === undefined || now - Date.parse(job.heartbeatAt) >= REINDEX_OWNER_TIMEOUT_MS);
}

export class IndexStateStore {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas = 1): Promise<IndexStateStore> {
    return new IndexStateStore(await new Kvm(nc).create(Buckets.indexState, { history: 5, replicas }));
  }

  async read(): Promise<{ state: IndexState | undefined; revision: number }> {
    const entry = await this.kv.get(KEY);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return { state: undefined, revision: entry?.revision ?? 0 };
    return { state: decodeJson<IndexState>(entry.value), revision: entry.revision };
  }

  /**
   * Changes the state with compare-and-set, retrying on a lost race. `change` returns the new state,
   * or `undefined` to leave it as it is.
   */
  async update(change: (current: IndexState | undefined) => IndexState | undefined): Promise<IndexState | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const { state, revision } = await this.read();
      const next = change(state);
      if (next === undefined) return state;
      try {
        if (revision === 0) await this.kv.create(KEY, encodeJson(next));
        else await this.kv.update(KEY, encodeJson(next), revision);
        return next;
      } catch {
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
      }
    }
    throw new Error('could not update the index state: too much contention');
  }

  /** Calls `onChange` with every new state (and the current one first). */
  async watch(onChange: (state: IndexState) => void): Promise<() => void> {
    const watcher = await this.kv.watch({ key: KEY });
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT' && entry.length > 0) onChange(decodeJson<IndexState>(entry.value));
      }
    })();
    return () => watcher.stop();
  }
}
