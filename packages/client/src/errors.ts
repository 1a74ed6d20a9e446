/** An answer of the API that is not a success: `status` and the API's own `message` (its `{ error }`). */
export class MemexApiError extends Error {
  override readonly name = 'MemexApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly details: { requestId?: string | null; retryAfterS?: number | null; body?: unknown } = {},
  ) {
    super(message);
  }

  get requestId(): string | null {
    return this.details.requestId ?? null;
  }
}

/** The request never got an HTTP answer (network down, TLS refused, aborted). */
export class MemexConnectionError extends Error {
  override readonly name = 'MemexConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof MemexApiError && error.status === 404;
}
