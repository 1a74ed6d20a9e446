import { MemexError, type CreateBatchItem, type CreateBatchOutcome } from '@memex/contracts';
import type { CommandClient } from '@memex/runtime';

interface Waiting {
  item: CreateBatchItem;
  bytes: number;
  deadline: number;
  requestId: string;
  resolve: (outcome: CreateBatchOutcome) => void;
  reject: (error: unknown) => void;
}

interface CoalescerOptions {
  /** Create commands this gateway has out at once; a create that finds them all out waits for one. */
  maxInFlight: number;
  /** The most memos one command carries. */
  maxItems: number;
  /** The most bytes of items one command carries (under the NATS max_payload). */
  maxBytes: () => number;
}

/**
 * Gathers concurrent single creates of a project into `create-batch` commands. A create never waits
 * for a timer: it goes at the end of the current turn of the event loop with whatever other creates
 * of the project came in that turn, or, while `maxInFlight` commands are already out, with the next
 * one that leaves when one of them answers. An idle gateway sends each create alone and at once;
 * under load many memos share a command, its delivery, acknowledgement and reply, and the memo
 * service's one transaction. Each create gets its own outcome (the memo, or the wire error its own
 * command would have answered); a failed command fails each of its creates with that error.
 */
export class CreateCoalescer {
  private readonly queues = new Map<string, Waiting[]>();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commands: CommandClient,
    private readonly options: CoalescerOptions,
  ) {}

  create(projectId: string, item: CreateBatchItem, { requestId, timeoutMs }: { requestId: string; timeoutMs: number }): Promise<CreateBatchOutcome> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(projectId) ?? [];
      queue.push({ item, bytes: Buffer.byteLength(JSON.stringify(item)) + 1, deadline: Date.now() + timeoutMs, requestId, resolve, reject });
      this.queues.set(projectId, queue);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.options.maxInFlight && this.queues.size > 0) {
      const [projectId, queue] = this.queues.entries().next().value as [string, Waiting[]];
      const group: Waiting[] = [];
      let bytes = 0;
      while (queue.length > 0 && group.length < this.options.maxItems && (group.length === 0 || bytes + queue[0]!.bytes <= this.options.maxBytes())) {
        const next = queue.shift()!;
        bytes += next.bytes;
        group.push(next);
      }
      // Projects take turns: one with more left goes to the back.
      this.queues.delete(projectId);
      if (queue.length > 0) this.queues.set(projectId, queue);
      void this.send(projectId, group);
    }
  }

  private async send(projectId: string, group: Waiting[]): Promise<void> {
    this.inFlight += 1;
    try {
      const timeoutMs = Math.min(...group.map((w) => w.deadline)) - Date.now();
      if (timeoutMs <= 0) throw new MemexError('Timeout');
      const { result } = await this.commands.send('create-batch', { projectId, items: group.map((w) => w.item) }, { requestId: group[0]!.requestId, timeoutMs });
      group.forEach((w, i) => {
        const outcome = result.results[i];
        if (outcome) w.resolve(outcome);
        else w.reject(new MemexError('Internal'));
      });
    } catch (error) {
      for (const w of group) w.reject(error);
    } finally {
      this.inFlight -= 1;
      if (this.queues.size > 0) this.schedule();
    }
  }
}
