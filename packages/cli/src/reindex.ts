import { IndexStateStore, REINDEX_OWNER_TIMEOUT_MS, reindexOwnerSilent, type IndexState } from '@memex/runtime';
import { options } from './options';
import { connectCli } from './nats';

/** How long the CLI waits for an indexer to take the job and load its model before leaving it queued. */
const ACCEPT_TIMEOUT_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `memex reindex --model ID [--wait]`: asks the indexers to rebuild the index with another
 * embedding model. The current model serves until the new index is complete, then they switch.
 * It waits until an indexer has loaded the model (or failed to: then it prints the indexer's error
 * and exits 1); with --wait, until the switch.
 *
 * `memex reindex --rebuild [--wait]`: replays the whole memo event log into the index of the model
 * it serves (catalog and chunks), e.g. after the index was lost or restored from an older backup.
 */
export async function runReindex(args: string[]): Promise<number> {
  const { values } = options(args, {
    model: { type: 'string' },
    rebuild: { type: 'boolean' },
    wait: { type: 'boolean' },
    status: { type: 'boolean' },
  });
  const nc = await connectCli();
  try {
    const store = await IndexStateStore.open(nc, Number(process.env.MEMEX_NATS_REPLICAS || 1));
    if (values.status) {
      console.log(JSON.stringify((await store.read()).state ?? null));
      return 0;
    }
    if (values.rebuild) return await requestRebuild(store, values.wait === true);
    const model = values.model;
    if (!model) throw new Error('usage: memex reindex --model ID [--wait] | memex reindex --rebuild [--wait] | memex reindex --status');
    let before: IndexState | undefined;
    const state = await store.update((current) => {
      before = current;
      if (!current) return { activeModel: model };
      // Asking for the model the index serves: nothing to rebuild; a pending job to another model is cancelled.
      if (current.activeModel === model) return current.reindex ? { activeModel: model } : undefined;
      return { activeModel: current.activeModel, reindex: { model, requestedAt: new Date().toISOString() } };
    });
    if (state?.activeModel === model && !state.reindex) {
      const cancelled = before?.reindex && before.reindex.model !== model ? before.reindex.model : undefined;
      console.log(cancelled ? `cancelled the re-index to ${cancelled}; the index keeps serving ${model}` : `the index already serves ${model}; nothing to do`);
      return 0;
    }
    console.log(`re-index to ${model} requested; ${state?.activeModel} serves until it completes`);
    return await follow(store, model, values.wait === true);
  } finally {
    await nc.close();
  }
}

/** Queues a rebuild of the active model's index (replacing any queued re-index), then follows it. */
async function requestRebuild(store: IndexStateStore, wait: boolean): Promise<number> {
  const state = await store.update((current) =>
    current ? { activeModel: current.activeModel, reindex: { model: current.activeModel, rebuild: true, requestedAt: new Date().toISOString() } } : undefined,
  );
  if (!state) {
    console.error('memex: no indexer has started yet: there is no index to rebuild');
    return 1;
  }
  console.log(`rebuild of the ${state.activeModel} index requested; it keeps serving meanwhile`);
  return follow(store, state.activeModel, wait);
}

/** Reports a queued job until an indexer has taken it (with `wait`: until it is done). */
async function follow(store: IndexStateStore, model: string, wait: boolean): Promise<number> {
  let last = '';
  const say = (line: string) => {
    if (line !== last) console.log(line);
    last = line;
  };
  const deadline = Date.now() + ACCEPT_TIMEOUT_MS;
  let accepted = false;
  for (;;) {
    await sleep(250);
    const { state: now } = await store.read();
    if (now?.activeModel === model && !now.reindex) {
      console.log(`done: the index now serves ${model}`);
      return 0;
    }
    if (now?.reindex?.model !== model) {
      if (now?.failed?.model === model) {
        console.error(`memex: re-index to ${model} refused: ${now.failed.error}`);
        return 1;
      }
      console.error(`memex: the re-index to ${model} was replaced by ${now?.reindex?.model ?? 'nothing'}`);
      return 1;
    }
    const job = now.reindex;
    // A job whose indexer stopped reporting would otherwise look like a replay that is merely slow.
    if (reindexOwnerSilent(job, Date.now())) {
      say(`no word from the indexer running the job (${job.owner}) for over ${REINDEX_OWNER_TIMEOUT_MS / 1000} s: it waits for a running indexer to take it over (is one running?)`);
      continue;
    }
    if (job.total !== undefined) {
      if (!accepted && !wait) {
        console.log(`started: replaying ${job.total} log positions (memex reindex --status shows progress)`);
        return 0;
      }
      accepted = true;
      say(`replayed ${job.replayed ?? 0}/${job.total} of the log`);
    } else if (job.owner) {
      say(`an indexer is loading ${model}`);
    } else {
      say('waiting for an indexer to take the job');
      if (!wait && Date.now() > deadline) {
        console.log(`no indexer took the job within ${ACCEPT_TIMEOUT_MS / 1000} s; it stays queued (is an indexer running?)`);
        return 0;
      }
    }
  }
}
