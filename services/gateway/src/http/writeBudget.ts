import { MemexError } from '@memex/contracts';

/**
 * One memo write's time budget (MEMEX_COMMAND_TIMEOUT_MS from when the route starts writing). The
 * steps before the command (the memo's key, its content blob) and the command itself share it, so a
 * client has its answer within the budget whichever step a NATS outage stalls. A step still pending
 * when the budget runs out answers 504 (outcome unknown to the client, as for any timeout); its late
 * result, if it comes, goes to `undo`.
 */
export class WriteBudget {
  private readonly deadline: number;

  constructor(ms: number) {
    this.deadline = Date.now() + ms;
  }

  /** What is left for the next step; `Timeout` when nothing is. */
  left(): number {
    const left = this.deadline - Date.now();
    if (left <= 0) throw new MemexError('Timeout');
    return left;
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
