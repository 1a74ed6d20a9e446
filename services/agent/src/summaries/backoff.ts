/** The longest a server's `Retry-After` holds a summary back, whatever it asks for. */
export const MAX_SUMMARY_RETRY_AFTER_MS = 60_000;

/**
 * The wait before summary attempt `attempt + 1`: what the server asked for in `Retry-After` (a 429
 * or 503; the adapter puts it on the error as `retryAfterMs`), at most MAX_SUMMARY_RETRY_AFTER_MS
 * and one attempt's time (LLM_TIMEOUT_MS); else `backoffMs` doubling per attempt.
 */
export function summaryRetryDelayMs(error: unknown, attempt: number, policy: { backoffMs: number; timeoutMs: number }): number {
  const asked = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  if (typeof asked === 'number' && Number.isFinite(asked) && asked >= 0) return Math.min(asked, MAX_SUMMARY_RETRY_AFTER_MS, policy.timeoutMs);
  return policy.backoffMs * 2 ** (attempt - 1);
}
