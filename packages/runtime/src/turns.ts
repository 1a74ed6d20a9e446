import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Milliseconds of work a long loop does in one turn of the event loop before it lets the others run
 * (a search, an ack that arrived meanwhile): what they wait for at most behind it, ingestion's
 * loops at least.
 */
export const TURN_BUDGET_MS = 2;

/**
 * `each` of every item in order, as `Array.prototype.map` would, but letting a turn of the event
 * loop pass after each `budgetMs` of it, so a request that arrives during a long batch is answered
 * within about that long instead of after the batch.
 */
export async function mapInTurns<T, R>(items: readonly T[], each: (item: T, index: number) => R, budgetMs = TURN_BUDGET_MS): Promise<R[]> {
  const out = new Array<R>(items.length);
  let started = performance.now();
  for (let i = 0; i < items.length; i++) {
    out[i] = each(items[i]!, i);
    if (i + 1 < items.length && performance.now() - started >= budgetMs) {
      await nextTurn();
      started = performance.now();
    }
  }
  return out;
}
