/**
 * Milliseconds of work a long loop does in one turn of the event loop before it lets the others run
 * (a search, an ack that arrived meanwhile): what they wait for at most behind it, ingestion's
 * loops at least.
 */
export const TURN_BUDGET_MS = 2;

const waiting: (() => void)[] = [];
let scheduled = false;

function resumeOne(): void {
  waiting.shift()?.();
  // The next waiter in the next turn: after the timers and the I/O that arrived meanwhile.
  if (waiting.length > 0) setImmediate(resumeOne);
  else scheduled = false;
}

/**
 * Resolves in a later turn of the event loop, after the I/O that arrived meanwhile (requests are
 * read and answered first). Loops that yield this way take turns: one of them goes on per turn, so
 * several batches in flight at once still hold the thread for one slice at a time, not one each.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeOne);
    }
  });
}

/**
 * `each` of every item in order, as `Array.prototype.map` would, but letting a turn of the event
 * loop pass (`nextTurn`) after each `budgetMs` of it, so a request that arrives during a long batch
 * is answered within about that long instead of after the batch.
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

/**
 * Runs `steps` (a generator that yields between pieces of its work) to its end, as a plain loop
 * would, but letting a turn of the event loop pass (`nextTurn`) after each `budgetMs` of it; its
 * result.
 */
export async function runInTurns<R>(steps: Iterator<unknown, R, undefined>, budgetMs = TURN_BUDGET_MS): Promise<R> {
  let started = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - started >= budgetMs) {
      await nextTurn();
      started = performance.now();
    }
  }
}
