import { IndexStateStore, connectNats } from '@memex/runtime';
import { options } from './main';

/**
 * `memex reindex --model ID [--wait]`: asks the indexers to rebuild the index with another
 * embedding model. The current model serves until the new index is complete, then they switch.
 */
export async function runReindex(args: string[]): Promise<number> {
  const { values } = options(args, { model: { type: 'string' }, wait: { type: 'boolean' }, status: { type: 'boolean' } });
  const url = process.env.NATS_URL || 'nats://127.0.0.1:4222';
  const nc = await connectNats({ url, name: 'memex-cli', timeoutMs: 3_000, auth: process.env });
  try {
    const store = await IndexStateStore.open(nc, Number(process.env.MEMEX_NATS_REPLICAS || 1));
    if (values.status) {
      console.log(JSON.stringify((await store.read()).state ?? null));
      return 0;
    }
    const model = values.model;
    if (!model) throw new Error('usage: memex reindex --model ID [--wait] | memex reindex --status');
    const state = await store.update((current) => {
      if (!current) return { activeModel: model };
      if (current.activeModel === model && !current.reindex) return undefined;
      return { ...current, reindex: { model, requestedAt: new Date().toISOString() } };
    });
    if (state?.activeModel === model && !state.reindex) {
      console.log(`the index already serves ${model}`);
      return 0;
    }
    console.log(`re-index to ${model} requested; ${state?.activeModel} serves until it completes`);
    if (!values.wait) return 0;
    let last = '';
    for (;;) {
      await new Promise((r) => setTimeout(r, 1_000));
      const { state: now } = await store.read();
      if (now?.activeModel === model && !now.reindex) {
        console.log(`done: the index now serves ${model}`);
        return 0;
      }
      if (now?.reindex?.model !== model) {
        console.error(`the re-index to ${model} was replaced by ${now?.reindex?.model ?? 'nothing'}`);
        return 1;
      }
      const line = now.reindex.owner ? `replayed ${now.reindex.replayed ?? 0}/${now.reindex.total ?? '?'} events` : 'waiting for an indexer';
      if (line !== last) console.log(line);
      last = line;
    }
  } finally {
    await nc.close();
  }
}
