import type { FastifyInstance } from 'fastify';
import {
  ChatOwners,
  CommandClient,
  IdempotencyStore,
  Directory,
  DirectoryCache,
  serviceIdentity,
  startService,
  type Logger,
} from '@memex/runtime';
import { buildGateway } from './app';
import type { GatewayDeps } from './http/context';
import { gatherMetrics } from './routes/health';
import type { GatewayConfig } from './config';
import { Subjects } from '@memex/contracts';
import { RateLimiter } from './rateLimit/limiter';
import { loadTls, type TlsMaterial } from './tls';

export interface Gateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly tls: TlsMaterial;
  readonly instance: string;
  readonly logger: Logger;
  stop(): Promise<void>;
}

/** Starts one gateway instance: HTTPS only, over NATS to the services. */
export async function startGateway(config: GatewayConfig, overrides: { logger?: Logger; instance?: string } = {}): Promise<Gateway> {
  const identity = { service: 'gateway' as const, ...serviceIdentity({ service: 'gateway', ...overrides }, config) };
  // TLS material is read before NATS is awaited: a wrong file fails at once, even with NATS down.
  const tls = await loadTls({ certFile: config.MEMEX_TLS_CERT, keyFile: config.MEMEX_TLS_KEY, dataDir: config.MEMEX_DATA_DIR }, identity.logger);

  return startService(identity, config, async ({ instance, logger, metrics, nc, jsm, content, onStop }) => {
    const directory = await Directory.open(nc, { replicas: config.MEMEX_NATS_REPLICAS });
    const credentials = await DirectoryCache.start(directory, logger);
    onStop(() => credentials.stop());
    const commands = new CommandClient(nc, config.MEMEX_COMMAND_TIMEOUT_MS);
    onStop(() => commands.close());
    // Made now, not on the first Idempotency-Key: with its replicas from the start, like every bucket.
    await IdempotencyStore.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, ttlMs: config.MEMEX_IDEMPOTENCY_TTL_MS });
    const limiter = new RateLimiter({ limit: config.MEMEX_RATE_LIMIT, windowMs: config.MEMEX_RATE_LIMIT_WINDOW_MS, instance });
    limiter.start(nc);
    // Failed authentications per client address, counted across every gateway instance: an attacker
    // spreading guesses over instances (round-robin behind a load balancer) gets no larger budget.
    const authFailures = new RateLimiter({
      limit: config.MEMEX_AUTH_FAILURE_LIMIT,
      windowMs: config.MEMEX_AUTH_FAILURE_WINDOW_MS,
      instance,
      subject: Subjects.authFailureSync,
    });
    authFailures.start(nc);
    onStop(() => authFailures.stop());
    onStop(() => limiter.stop());

    const deps: GatewayDeps = { config, nc, jsm, commands, content, credentials, limiter, authFailures, logger, metrics, instance };
    const app = await buildGateway(deps, { https: { cert: tls.cert, key: tls.key }, logger });
    // The AUDIT stream and the chat owners' bucket exist, with their replicas, before the first
    // request rather than at the first write.
    await deps.audit?.open();
    await ChatOwners.open(nc, config.MEMEX_NATS_REPLICAS);
    // Requests in flight finish before the limiters, credentials and connections behind them stop.
    onStop(() => app.close());
    await app.listen({ port: config.MEMEX_PORT, host: config.MEMEX_HOST });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.MEMEX_PORT;
    const url = `https://localhost:${port}`;
    return {
      health: async () => ({}),
      operatorMetrics: () => gatherMetrics(nc),
      ready: { message: 'gateway listening (HTTPS only)', fields: { url, tls: tls.source } },
      exports: { app, url, tls },
    };
  });
}
