import { Type, type Static } from '@sinclair/typebox';
import { ConfigError, loadEnv, ServiceEnv } from '@memex/runtime';
import { parseRetention } from './auth/audit';

export const GatewayEnv = Type.Object({
  /** MEMEX_HEALTH_PORT among them is the operator port: /healthz, /readyz and /metrics, never on the public listener. */
  ...ServiceEnv.properties,
  MEMEX_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8443, description: 'HTTPS port' }),
  MEMEX_HOST: Type.String({ default: '0.0.0.0', description: 'Address to listen on' }),
  MEMEX_TLS_CERT: Type.Optional(Type.String({ description: 'PEM certificate file; unset: a self-signed pair in the data dir' })),
  MEMEX_TLS_KEY: Type.Optional(Type.String({ description: 'PEM private key file' })),
  MEMEX_MAX_CONTENT_BYTES: Type.Integer({
    minimum: 1,
    default: 16 * 1024 * 1024,
    description: 'Largest memo content, UTF-8 bytes (above: 413)',
  }),
  MEMEX_BODY_LIMIT: Type.Optional(
    Type.Integer({ minimum: 1024, description: 'Largest request body, bytes (default: 2 × MEMEX_MAX_CONTENT_BYTES + 1 MiB, room for JSON escapes)' }),
  ),
  MEMEX_BATCH_BODY_LIMIT: Type.Integer({
    minimum: 1024,
    default: 64 * 1024 * 1024,
    description: 'Largest POST /api/v1/memo/batch body, bytes (1,000 memos of ~32 KB of JSON each; above: 413)',
  }),
  MEMEX_CREATE_COALESCE: Type.Integer({
    minimum: 0,
    default: 8,
    description: 'Create commands a gateway has out at once; single POSTs that find them all out share the next one (0: each POST its own command)',
  }),
  MEMEX_UPLOAD_LIMIT: Type.Integer({
    minimum: 1024,
    default: 100 * 1024 * 1024,
    description: 'Largest uploaded file (multipart POST /api/v1/memo), bytes; larger is refused with 413 before the body is read',
  }),
  MEMEX_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 30_000,
    description: 'Longest a client may take to send a request (headers and body)',
  }),
  MEMEX_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 72_000, description: 'Idle keep-alive connections close after this' }),
  MEMEX_COMMAND_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000, description: 'Longest a memo write may take' }),
  MEMEX_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000, description: 'Longest a read or search may take' }),
  MEMEX_AGENT_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 300_000, description: 'Longest a chat or generate may take' }),
  MEMEX_CONSISTENCY_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 2_000,
    description: 'How long PATCH/DELETE wait for search to reflect them before answering anyway',
  }),
  MEMEX_RATE_LIMIT: Type.Integer({ minimum: 0, default: 6_000, description: 'Requests per project per window; 0 turns it off' }),
  MEMEX_RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000, description: 'Rate limit window' }),
  MEMEX_IDEMPOTENCY_TTL_MS: Type.Integer({
    minimum: 60_000,
    default: 86_400_000,
    description: 'How long an Idempotency-Key remembers its request body',
  }),
  MEMEX_AUTH_FAILURE_LIMIT: Type.Integer({
    minimum: 0,
    default: 20,
    description: 'Failed authentications per client address per window before it gets 429; 0 turns it off',
  }),
  MEMEX_AUTH_FAILURE_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000, description: 'Failed-authentication window' }),
  MEMEX_AUDIT_QUERIES: Type.Union([Type.Literal('off'), Type.Literal('hash'), Type.Literal('full')], {
    default: 'off',
    description: 'What the audit trail keeps of search, chat and generate text: nothing, its SHA-256, or the text',
  }),
  MEMEX_AUDIT_RETENTION: Type.String({ default: '90d', description: 'How long audit entries are kept: 90d, 12h, 3600s…' }),
  MEMEX_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({
    default: false,
    description: 'Accept webhook URLs on loopback, private and link-local addresses, and http ones (tests, closed networks)',
  }),
});
export type GatewayConfig = Static<typeof GatewayEnv> & { MEMEX_BODY_LIMIT: number };

/** The body limit a configuration implies. */
export function bodyLimit(config: Static<typeof GatewayEnv>): number {
  return config.MEMEX_BODY_LIMIT ?? 2 * config.MEMEX_MAX_CONTENT_BYTES + 1024 * 1024;
}

export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const loaded = loadEnv(GatewayEnv, env);
  const config = { ...loaded, MEMEX_BODY_LIMIT: bodyLimit(loaded) };
  try {
    parseRetention(config.MEMEX_AUDIT_RETENTION);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${(error as Error).message}`);
  }
  if (Boolean(config.MEMEX_TLS_CERT) !== Boolean(config.MEMEX_TLS_KEY)) {
    throw new ConfigError('Invalid configuration: MEMEX_TLS_CERT and MEMEX_TLS_KEY must be set together');
  }
  return config;
}
