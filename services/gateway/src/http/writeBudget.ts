import { MemexError } from '@memex/contracts';
import { transientNatsError } from '@memex/runtime';

/**
 * One memo write's time budget (MEMEX_COMMAND_TIMEOUT_MS from when the route starts writing). The
 * steps before the command (the memo's key, its content blob) and the command itself share it, so a
 * client has its answer within the budget whichever step a NATS outage stalls. A step still pending
 * when the budget runs out answers 504 (outcome unknown to the client, as for any timeout); its late
 * result, if it comes, goes to `undo`.
 */
export class WriteBudget {
  private readonly deadline: number;

  /** `connected` tells whether NATS is reachable: a step is tried again only while it is. */
  constructor(ms: number, private readonly connected: () => boolean = () => true) {
    this.deadline = Date.now() + ms;
  }

  /** What is left for the next step; `Timeout` when nothing is. */
  left(): number {
    const left = this.deadline - Date.now();
    if (left <= 0) throw new MemexError('Timeout');
    return left;
  }

  /**
   * Runs an idempotent step, again after a transient NATS failure (a JetStream stream without a
   * leader while a cluster elects one after a server stopped, a timeout) for as long as the budget
   * and the connection last: backing off 100 ms, doubling to 1 s.
   */
  async retry<T>(attempt: () => Promise<T>, undo?: (late: T) => unknown): Promise<T> {
    for (let n = 0; ; n++) {
      try {
        return await this.step(attempt(), undo);
      } catch (error) {
        const wait = Math.min(1_000, 100 * 2 ** n);
        if (!transientNatsError(error) || !this.connected() || this.deadline - Date.now() <= wait) throw error;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  async step<T>(work: Promise<T>, undo?: (late: T) => unknown): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = true;
        reject(new MemexError('Timeout'));
      }, this.left());
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
      if (expired) void work.then(undo, () => undefined).catch(() => undefined);
    }
  }
}
