import { MemexError } from '@memex/contracts';

/** Maps a NATS client failure to the Memex error a caller should see. */
export function fromNatsError(error: unknown, what: string): MemexError {
  if (error instanceof MemexError) return error;
  const e = error as { name?: string; code?: string; message?: string };
  const text = `${e?.name ?? ''} ${e?.code ?? ''} ${e?.message ?? ''}`;
  if (/no ?responders|503/i.test(text)) return new MemexError('ServiceUnavailable', undefined, { cause: error });
  if (/timeout|timed out/i.test(text)) return new MemexError('Timeout', undefined, { cause: new Error(`${what}: ${e?.message}`) });
  if (/closed|disconnect|CONNECTION/i.test(text)) return new MemexError('ServiceUnavailable', undefined, { cause: error });
  return new MemexError('Internal', undefined, { cause: error });
}
