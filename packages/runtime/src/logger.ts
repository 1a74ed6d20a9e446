import { pino, type DestinationStream, type Logger } from 'pino';
import { logTraceFields, tracingOn } from './tracing/context';

export type { Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  instanceId?: string;
  level?: string;
  /** Where lines go (default stdout); tests capture them here. */
  destination?: DestinationStream;
}

const REDACTED = '[redacted]';

/** Query parameters whose values are credentials, whatever a client meant by sending them. */
const SECRET_PARAMS = /([?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|auth|authorization|password|secret)=)[^&;#\s"']*/gi;
/** Memex keys and tokens by their prefix, and bearer credentials, wherever they appear in text. */
const SECRET_TEXT = /\b(?:mxp|mxo)_[A-Za-z0-9_-]+|\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** `text` with every credential it holds replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET_PARAMS, `$1${REDACTED}`).replace(SECRET_TEXT, (match, scheme: string | undefined) => (scheme ? `${scheme} ${REDACTED}` : REDACTED));
}

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (depth > 6 || typeof value !== 'object' || value === null) return value;
  if (value instanceof Error) return scrub({ ...pino.stdSerializers.err(value) }, depth + 1);
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  // Requests, responses and other class instances are left to their serializers (which redact too).
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = /^(authorization|cookie|x-api-key|api_?key|apiKey|token|password|secret)$/i.test(k) ? REDACTED : scrub(v, depth + 1);
  return out;
}

/**
 * JSON logs on stdout, one line per entry, with the service and instance on every line. Credentials
 * never reach a line: Authorization and cookie headers, key-like fields, `?api_key=`-style URL
 * parameters, and any Memex key or bearer credential inside messages and errors are `[redacted]`.
 */
export function createLogger({ service, instanceId, level = 'info', destination }: LoggerOptions): Logger {
  return pino(
    {
      level,
      base: { service, ...(instanceId ? { instance: instanceId } : {}) },
      timestamp: pino.stdTimeFunctions.isoTime,
      // trace_id and span_id of the span a line is logged in, while tracing is on.
      mixin: () => (tracingOn() ? logTraceFields() : {}),
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => scrub(object) as Record<string, unknown>,
      },
      serializers: {
        req: (req: { method?: string; url?: string; headers?: Record<string, unknown>; socket?: { remoteAddress?: string } }) => ({
          method: req.method,
          url: req.url === undefined ? undefined : redactSecrets(req.url),
          remoteAddress: req.socket?.remoteAddress,
        }),
        err: (err: Error) => scrub({ ...pino.stdSerializers.err(err) }),
      },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redactSecrets(a) : a)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** A logger that drops everything: for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
