import { uuidV7, type Logger } from '@memex/runtime';
import type { MemoCommandService } from '../memo/handlers';
import type { MemoReadModel } from '../readModel/port';

/** The longest the sweeper sleeps, even when no memo is due sooner (new memos may expire earlier). */
const MAX_SLEEP_MS = 30_000;

/**
 * Erases memos whose expiration date has passed, exactly as DELETE does (tombstone reason
 * `expired`): wakes at the next expiration it knows of (or every 30 s). Several memo instances may
 * sweep at once; the decider makes a second erasure a no-op.
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private busy = false;

  constructor(
    private readonly readModel: MemoReadModel,
    private readonly commands: MemoCommandService,
    private readonly clock: () => Date,
    private readonly logger: Logger,
  ) {}

  async sweepOnce(): Promise<number> {
    let archived = 0;
    for (;;) {
      const due = await this.readModel.dueForArchive(this.clock().toISOString(), 200);
      if (due.length === 0) return archived;
      for (const { projectId, memoId } of due) {
        const done = await this.commands.erase(projectId, memoId, 'expired', { commandId: uuidV7(), requestId: undefined });
        if (done.applied) archived += 1;
      }
      if (due.length < 200) return archived;
    }
  }

  start(): void {
    this.tick();
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.busy = true;
    this.running = this.sweepOnce()
      .then((n) => {
        if (n > 0) this.logger.info({ erased: n }, 'erased expired memos');
      })
      .catch((error: unknown) => this.logger.error({ err: error }, 'expiry sweep failed'))
      .then(() => {
        this.busy = false;
        return this.schedule();
      });
  };

  private async schedule(): Promise<void> {
    if (this.stopped) return;
    const next = await this.readModel.nextExpiration().catch(() => undefined);
    const untilNext = next ? Date.parse(next) - this.clock().getTime() : MAX_SLEEP_MS;
    clearTimeout(this.timer);
    this.timer = setTimeout(this.tick, Math.max(20, Math.min(MAX_SLEEP_MS, untilNext + 5)));
  }

  /** Re-plans the next wake-up: a memo with an earlier expiration may just have been written. */
  poke(): void {
    if (!this.stopped && !this.busy) void this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
