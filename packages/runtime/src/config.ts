import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ConfigError } from './configError';
import { EXIT_CONFIG } from './exitCodes';
import { DEFAULT_NATS_WRITE_DELAY_MS } from './nats/connection';

export { ConfigError };

/**
 * Runs an entry point's `start` (reading its settings, then connecting with its credentials); when
 * either is refused with a {@link ConfigError}, prints the message and exits with
 * {@link EXIT_CONFIG}: a supervisor then stops instead of restarting the process in a loop. A
 * `start` that returns a promise is followed to its end.
 */
export function configOrExit<T>(start: () => T): T {
  try {
    const started = start();
    return (started instanceof Promise ? started.catch(exitOnConfigError) : started) as T;
  } catch (error) {
    return exitOnConfigError(error);
  }
}

function exitOnConfigError(error: unknown): never {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(EXIT_CONFIG);
}

/**
 * Reads a TypeBox object schema of SCREAMING_CASE variables from `env`: converts strings to the
 * declared types, applies defaults and fails with a message naming the variable. Only entry points
 * pass `process.env`.
 */
export function loadEnv<T extends TObject>(schema: T, env: Record<string, string | undefined>): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const converted = Value.Default(schema, Value.Convert(schema, raw));
  const first = Value.Errors(schema, converted).First();
  if (first) {
    const name = first.path.replace(/^\//, '').split('/')[0] ?? '';
    const given = name ? env[name] : undefined;
    throw new ConfigError(
      `Invalid configuration: ${name || 'environment'} ${given === undefined ? 'is missing' : `= ${JSON.stringify(given)}`}: ${first.message}`,
    );
  }
  return converted as Static<T>;
}

/** A plain-HTTP /healthz and /readyz for this process (and, on the gateway, /metrics), off the public port. */
export const HealthPortEnv = {
  MEMEX_HEALTH_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Plain-HTTP /healthz and /readyz of this process' })),
} satisfies Record<string, TSchema>;

/** The retry overrides of a service's configuration. */
export function retryOverrides(config: { MEMEX_RETRY_LIMIT?: number | undefined; MEMEX_RETRY_BACKOFF_MS?: number | undefined }) {
  return { maxDeliver: config.MEMEX_RETRY_LIMIT, backoffBaseMs: config.MEMEX_RETRY_BACKOFF_MS };
}

/** Schema pieces shared by every service's configuration. */
export const CommonEnv = {
  NATS_URL: Type.String({ default: 'nats://127.0.0.1:4222', description: 'NATS server URL(s), comma-separated' }),
  MEMEX_DATA_DIR: Type.String({ default: './data', description: 'Where embedded stores keep their files' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  NATS_WRITE_DELAY_MS: Type.Number({
    minimum: 0,
    maximum: 100,
    default: DEFAULT_NATS_WRITE_DELAY_MS,
    description:
      'Messages this process sends to NATS in one turn of its event loop are written to the socket together, a message waiting at most this long after the oldest unwritten one while the process keeps sending (fewer system calls here and in nats-server under load); 0: each written as nats.js does, at the end of the microtask it was sent in',
  }),
  MEMEX_NATS_REPLICAS: Type.Integer({ minimum: 1, maximum: 5, default: 1, description: 'JetStream stream replicas' }),
  MEMEX_SEAL_DEFLATE: Type.Boolean({
    default: true,
    description:
      'Write compact forms: sealed boxes deflated before encryption (format 2), lean event rows, deflated memo documents, index text and catalog, memo events on the bus with raw sealed bytes. false while rolling from an older version: it reads only the older forms',
  }),
  NATS_CREDS: Type.Optional(Type.String({ description: 'NATS credentials file (JWT + NKey seed)' })),
  NATS_USER: Type.Optional(Type.String({ description: 'NATS user (with NATS_PASSWORD)' })),
  NATS_PASSWORD: Type.Optional(Type.String()),
  NATS_TOKEN: Type.Optional(Type.String({ description: 'NATS token' })),
  NATS_TLS_CA: Type.Optional(Type.String({ description: 'CA file to verify the NATS server with' })),
  NATS_TLS_CERT: Type.Optional(Type.String({ description: 'Client certificate file for NATS mutual TLS' })),
  NATS_TLS_KEY: Type.Optional(Type.String({ description: 'Client key file for NATS mutual TLS' })),
  MEMEX_RETRY_LIMIT: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: 'Deliveries of a message before it is dead-lettered (default 5-10 by consumer)' }),
  ),
  MEMEX_RETRY_BACKOFF_MS: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 60_000, description: 'First redelivery delay, doubling up to 30 s (default 500)' }),
  ),
  MONGODB_URL: Type.Optional(
    Type.String({ description: 'MongoDB: memo stores, chats, and memo content blobs (GridFS). Set it on every service or on none' }),
  ),
  MONGODB_DB: Type.String({ default: 'memex', description: 'MongoDB database name' }),
  MEMEX_FAILPOINTS: Type.Optional(Type.String({ description: 'Tests only: crash points to arm (see runtime/failpoints)' })),
} satisfies Record<string, TSchema>;

/** What every service's configuration holds: its schema spreads these, then adds its own variables. */
export const ServiceEnv = Type.Object({ ...CommonEnv, ...HealthPortEnv });
export type ServiceEnv = Static<typeof ServiceEnv>;
