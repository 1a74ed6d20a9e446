/**
 * Model failures by kind, the same for every adapter: what the metrics count, what readiness
 * reports, and what decides whether a summary is worth asking for again.
 */
export type ModelErrorKind = 'timeout' | 'unreachable' | 'rate_limited' | 'server_error' | 'rejected' | 'empty' | 'format' | 'cut' | 'other';

export const MODEL_ERROR_KINDS: readonly ModelErrorKind[] = ['timeout', 'unreachable', 'rate_limited', 'server_error', 'rejected', 'empty', 'format', 'cut', 'other'];

export function modelErrorKind(error: unknown): ModelErrorKind {
  if (!(error instanceof Error)) return 'other';
  const kind = (error as { kind?: unknown }).kind;
  if (kind === 'empty' || kind === 'format') return kind;
  if (error.name === 'TimeoutError' || /TimeoutError$/.test(error.name)) return 'timeout';
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') {
    if (status === 429) return 'rate_limited';
    if (status >= 500) return 'server_error';
    return 'rejected';
  }
  if (/cannot reach/i.test(error.message)) return 'unreachable';
  if (/empty reply/i.test(error.message)) return 'empty';
  if (/closed the connection|before the reply was complete/i.test(error.message)) return 'cut';
  if (/not JSON/i.test(error.message)) return 'format';
  // The adapters' own errors name what the server said; anything else is a fault on our side.
  if (error.name === 'OllamaError' || error.name === 'OpenAiError') return 'rejected';
  return 'other';
}

/** A failure of the model or its server (the summary falls back), not a fault in our own code (which fails the memo visibly). */
export function isModelFailure(kind: ModelErrorKind): boolean {
  return kind !== 'other';
}

/** A reply can be asked for again: the model was down, slow, overloaded or said nothing. */
export function isTransient(kind: ModelErrorKind): boolean {
  return kind === 'timeout' || kind === 'unreachable' || kind === 'rate_limited' || kind === 'server_error' || kind === 'empty' || kind === 'cut';
}

export function describeModelError(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError' && !/ms\b/.test(error.message)) return 'the model did not answer in time';
  return error instanceof Error ? error.message : String(error);
}
