import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ConfigError } from '@memex/runtime';

const DAY = 24 * 3_600_000;

/** The feed's and the webhooks' settings (part of the memo service's configuration). */
export const FeedEnv = {
  MEMEX_EVENTS_RETENTION: Type.String({
    default: '30d',
    pattern: '^[0-9]+(ms|s|m|h|d)$',
    description: 'How long the public event feed keeps events: a number and a unit (ms, s, m, h, d), e.g. 30d',
  }),
  MEMEX_WEBHOOK_RETRY_DELAYS_MS: Type.String({
    default: '5000,300000,1800000,7200000,18000000,36000000',
    pattern: '^[0-9]+(,[0-9]+)*$',
    description: 'Delays before each retry of a failed webhook delivery, milliseconds, comma-separated; after the last the delivery is failed',
  }),
  MEMEX_WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000, description: 'Longest a webhook receiver may take to answer' }),
  MEMEX_WEBHOOK_DISABLE_AFTER_MS: Type.Integer({
    minimum: 1,
    default: 5 * DAY,
    description: 'A webhook whose deliveries have failed for this long is disabled',
  }),
  MEMEX_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({
    default: false,
    description: 'Let webhooks reach loopback, private and link-local addresses, over http too (tests, closed networks)',
  }),
  MEMEX_WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1024, default: 16, description: 'Deliveries in flight per webhook per instance' }),
} satisfies Record<string, TSchema>;

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- only its type is needed
const FeedEnvSchema = Type.Object(FeedEnv);

export interface FeedConfig {
  retentionMs: number;
  retryDelaysMs: number[];
  timeoutMs: number;
  disableAfterMs: number;
  allowPrivate: boolean;
  concurrency: number;
}

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: DAY } as const;

/** `30d`, `12h`, `90m`, `45s`, `500ms` → milliseconds. */
export function parseDuration(value: string): number | undefined {
  const m = /^([0-9]+)(ms|s|m|h|d)$/.exec(value);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

export function parseFeedConfig(env: Static<typeof FeedEnvSchema>): FeedConfig {
  const retentionMs = parseDuration(env.MEMEX_EVENTS_RETENTION);
  if (!retentionMs || retentionMs < 1_000) throw new ConfigError(`Invalid configuration: MEMEX_EVENTS_RETENTION = ${JSON.stringify(env.MEMEX_EVENTS_RETENTION)}: must be at least 1s`);
  return {
    retentionMs,
    retryDelaysMs: env.MEMEX_WEBHOOK_RETRY_DELAYS_MS.split(',').map(Number),
    timeoutMs: env.MEMEX_WEBHOOK_TIMEOUT_MS,
    disableAfterMs: env.MEMEX_WEBHOOK_DISABLE_AFTER_MS,
    allowPrivate: env.MEMEX_WEBHOOK_ALLOW_PRIVATE,
    concurrency: env.MEMEX_WEBHOOK_CONCURRENCY,
  };
}
