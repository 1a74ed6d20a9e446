import { MemexError } from '@memex/contracts';

/** Maps a NATS client failure to the Memex error a caller should see. */
export function fromNatsError(error: unknown, what: string): MemexError {
  if (error instanceof MemexError) return error;
  const e = error as { name?: string; code?: string; message?: string; cause?: { message?: string } };
  const text = `${e?.name ?? ''} ${e?.code ?? ''} ${e?.message ?? ''} ${e?.cause?.message ?? ''}`;
  // "JetStream not enabled" with no responders: the stream has no leader at the moment (a cluster
  // electing one after a server stopped), or no server runs JetStream. Unavailable, not a bug.
  if (/no ?responders|503|JetStreamNotEnabled|jetstream is not enabled/i.test(text)) return new MemexError('ServiceUnavailable', undefined, { cause: error });
  if (/timeout|timed out/i.test(text)) return new MemexError('Timeout', undefined, { cause: new Error(`${what}: ${e?.message}`) });
  if (/closed|disconnect|CONNECTION/i.test(text)) return new MemexError('ServiceUnavailable', undefined, { cause: error });
  return new MemexError('Internal', undefined, { cause: error });
}

/**
 * Whether trying the same NATS operation again soon can succeed: no leader or no responder yet, or
 * a timeout. Only for idempotent operations (a KV compare-and-set, a publish with a message id).
 */
export function transientNatsError(error: unknown): boolean {
  if (error instanceof MemexError) return false;
  const code = fromNatsError(error, 'retry').code;
  return code === 'ServiceUnavailable' || code === 'Timeout';
}
