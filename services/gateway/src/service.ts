import type { FastifyInstance } from 'fastify';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  CommandClient,
  ContentStore,
  IdempotencyStore,
  Keyring,
  openBlobStore,
  Directory,
  DirectoryCache,
  Metrics,
  connectNats,
  createLogger,
  ensureTopology,
  retryOverrides,
  serveMetrics,
  startHealthServer,
  instanceId as newInstanceId,
  type Logger,
} from '@memex/runtime';
import { buildGateway } from './app';
import { gatherMetrics } from './routes/health';
import type { GatewayConfig } from './config';
import { Subjects } from '@memex/contracts';
import { RateLimiter } from './rateLimit/limiter';
import { loadTls, type TlsMaterial } from './tls';

export interface Gateway {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly tls: TlsMaterial;
  readonly logger: Logger;
  stop(): Promise<void>;
}

/** Starts one gateway instance: HTTPS only, over NATS to the services. */
export async function startGateway(config: GatewayConfig, overrides: { logger?: Logger; instance?: string } = {}): Promise<Gateway> {
  const instance = overrides.instance ?? newInstanceId();
  const logger = overrides.logger ?? createLogger({ service: 'gateway', instanceId: instance, level: config.LOG_LEVEL });
  const tls = await loadTls({ certFile: config.MEMEX_TLS_CERT, keyFile: config.MEMEX_TLS_KEY, dataDir: config.MEMEX_DATA_DIR }, logger);

  const nc = await connectNats({ url: config.NATS_URL, name: `memex-gateway-${instance}`, logger, auth: config, writeDelayMs: config.NATS_WRITE_DELAY_MS, waitForServer: true });
  const jsm = await jetstreamManager(nc);
  await ensureTopology(jsm, { replicas: config.MEMEX_NATS_REPLICAS, retry: retryOverrides(config), logger });
  const directory = await Directory.open(nc, { replicas: config.MEMEX_NATS_REPLICAS });
  const credentials = await DirectoryCache.start(directory, logger);
  const commands = new CommandClient(nc, config.MEMEX_COMMAND_TIMEOUT_MS);
  const keyring = await Keyring.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, deflate: config.MEMEX_SEAL_DEFLATE });
  // Made now, not on the first Idempotency-Key: with its replicas from the start, like every bucket.
  await IdempotencyStore.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, ttlMs: config.MEMEX_IDEMPOTENCY_TTL_MS });
  const blobs = await openBlobStore(nc, config);
  const content = new ContentStore(blobs, keyring);
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

  const metrics = new Metrics();
  const metricsSub = serveMetrics(nc, 'gateway', instance, metrics);
  const app = await buildGateway(
    { config, nc, jsm, commands, content, credentials, limiter, authFailures, logger, metrics, instance },
    { https: { cert: tls.cert, key: tls.key }, logger },
  );
  await app.listen({ port: config.MEMEX_PORT, host: config.MEMEX_HOST });
  const operator = config.MEMEX_HEALTH_PORT
    ? await startHealthServer(config.MEMEX_HEALTH_PORT, 'gateway', instance, async () => ({ ready: !nc.isClosed() }), { metrics: () => gatherMetrics(nc) })
    : undefined;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.MEMEX_PORT;
  const url = `https://localhost:${port}`;
  logger.info({ url, tls: tls.source }, 'gateway listening (HTTPS only)');

  return {
    app,
    url,
    tls,
    logger,
    async stop() {
      await app.close();
      operator?.close();
      metricsSub.unsubscribe();
      limiter.stop();
      authFailures.stop();
      credentials.stop();
      commands.close();
      keyring.close();
      await blobs.close();
      await nc.drain().catch(() => undefined);
    },
  };
}
