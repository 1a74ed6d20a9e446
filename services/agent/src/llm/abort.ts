/**
 * Abort and deadline plumbing shared by the model adapters: one call's lifetime, and racing a
 * promise against an abort signal.
 */

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/** Settles with `promise`, or rejects with the abort reason as soon as `signal` aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * One HTTP call's lifetime: aborts on the caller's signal or when the deadline passes, and every
 * fetch made through `fetch` carries that abort, so the connection closes rather than lingering.
 */
export class CallScope {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private remaining: number;
  private resumedAt = 0;
  private readonly onOuterAbort = () => this.controller.abort(abortReason(this.outer!));

  constructor(
    private readonly outer: AbortSignal | undefined,
    private readonly timeoutMs: number,
    private readonly operation: string,
    private readonly timeoutError: (operation: string, timeoutMs: number) => Error,
  ) {
    this.remaining = timeoutMs;
    if (outer?.aborted) this.controller.abort(abortReason(outer));
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
    this.resume();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the clock (while our own reader is slow). */
  pause(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.remaining -= Date.now() - this.resumedAt;
  }

  resume(): void {
    if (this.timer !== undefined || this.signal.aborted) return;
    this.resumedAt = Date.now();
    this.timer = setTimeout(() => this.controller.abort(this.timeoutError(this.operation, this.timeoutMs)), Math.max(0, this.remaining));
  }

  fetch(base: typeof fetch): typeof fetch {
    return (input, init) => base(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, this.signal]) : this.signal });
  }

  /** Ends the call; a reply still streaming is cut off, closing its connection. */
  dispose(): void {
    this.pause();
    this.outer?.removeEventListener('abort', this.onOuterAbort);
    if (!this.signal.aborted) this.controller.abort(new Error('model call ended'));
  }
}
