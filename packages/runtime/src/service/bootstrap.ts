/**
 * One start-up and one stop for every Memex service. `startService` connects to NATS, ensures the
 * topology, opens the blob store, the keyring and the content store, and hands them to the
 * service's own `start`, which opens what differs (stores, consumers, queries). It then serves the
 * service's subscriptions, its metrics and health (the NATS health subject, the optional plain-HTTP
 * health server) and logs the ready line.
 *
 * Stop runs in reverse of start: the health server and subscriptions first (nothing new comes in),
 * then the service's `onStop` steps last-registered first, then keyring, blobs and the NATS drain,
 * then the `onClose` steps (stores that handlers still in flight may use until the connection is gone).
 */
import type { Server } from 'node:http';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { ServiceName } from '@memex/contracts';
import { ContentStore, openBlobStore } from '../blobs/content';
import type { BlobStore } from '../blobs/port';
import { retryOverrides, type ServiceEnv } from '../config';
import { serveHealth } from '../health/health';
import { startHealthServer } from '../health/httpHealth';
import { Keyring } from '../keyring/keyring';
import { instanceId as newInstanceId } from '../lifecycle';
import { createLogger, type Logger } from '../logger';
import { Metrics } from '../metrics/registry';
import { serveMetrics } from '../metrics/serve';
import { connectNats, subscriptionsServed } from '../nats/connection';
import { ensureTopology, type RetryOverrides } from '../nats/topology';
import { startTracing } from '../tracing/tracing';

/** Who this process is: overridable by tests (a shared logger, a fixed instance id). */
export interface ServiceIdentity {
  service: ServiceName;
  instance?: string | undefined;
  logger?: Logger | undefined;
}

/** What every service gets from the bootstrap. */
export interface ServiceScope {
  readonly service: ServiceName;
  readonly instance: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly js: JetStreamClient;
  readonly blobs: BlobStore;
  readonly keyring: Keyring;
  readonly content: ContentStore;
  /** MEMEX_RETRY_LIMIT and MEMEX_RETRY_BACKOFF_MS, for every consumer the service runs. */
  readonly retry: RetryOverrides;
  /** A step of stop, run last-registered first, before keyring, blobs and NATS close. */
  onStop(step: () => unknown): void;
  /** A store to close after NATS has drained, last-registered first. */
  onClose(step: () => unknown): void;
}

export interface HealthCheck {
  /** Absent: ready whenever the NATS connection is open; false: not ready either way. */
  ready?: boolean;
  /** Facts shown on /readyz and in health pings: store kind, model, backlog. */
  details?: Record<string, unknown>;
}

/** What a service's `start` hands back to the bootstrap. */
export interface ServiceStarted<T> {
  /** This instance's readiness details; the bootstrap adds the NATS connection's state. */
  health(): Promise<HealthCheck>;
  /** Queries and other subscriptions the service serves; unsubscribed first at stop. */
  subscriptions?: readonly Subscription[];
  /** Prometheus text for `GET /metrics` on the health port (the gateway's operator port). */
  operatorMetrics?: () => Promise<string>;
  /** Runs once subscriptions and health are served, before the ready line. */
  served?: () => void;
  /** The line logged at info when the instance is ready. */
  ready: { message: string; fields: Record<string, unknown> };
  /** What the caller of `startService` gets beside `instance`, `logger` and `stop`. */
  exports: T;
}

export interface RunningService {
  readonly instance: string;
  readonly logger: Logger;
  /** Stops the instance once; later calls wait for the same stop. */
  stop(): Promise<void>;
}

/** The instance id and logger of a service, from its overrides or made anew. */
export function serviceIdentity(identity: ServiceIdentity, config: Pick<ServiceEnv, 'LOG_LEVEL'>): { instance: string; logger: Logger } {
  const instance = identity.instance ?? newInstanceId();
  const logger = identity.logger ?? createLogger({ service: identity.service, instanceId: instance, level: config.LOG_LEVEL });
  return { instance, logger };
}

type Step = () => unknown;

async function runSteps(steps: readonly Step[], errors: unknown[]): Promise<void> {
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  }
}

/**
 * Starts one instance of a service. A `start` that throws has the steps it registered undone, and
 * the connections closed, before the error reaches the caller.
 */
export async function startService<T>(
  identity: ServiceIdentity,
  config: ServiceEnv,
  start: (scope: ServiceScope) => Promise<ServiceStarted<T>>,
): Promise<T & RunningService> {
  const { service } = identity;
  const { instance, logger } = serviceIdentity(identity, config);
  const stops: Step[] = [];
  const closes: Step[] = [];
  let front: Step[] = [];
  // Off (nothing imported) unless an OTLP endpoint is configured; flushed after everything else stopped.
  const tracing = await startTracing({ serviceName: `memex-${service}`, instance, logger });
  closes.unshift(() => tracing.stop());

  const nc = await connectNats({
    url: config.NATS_URL,
    name: `memex-${service}-${instance}`,
    logger,
    auth: config,
    writeDelayMs: config.NATS_WRITE_DELAY_MS,
    waitForServer: true,
  }).catch(async (error: unknown) => {
    await tracing.stop();
    throw error;
  });
  const stopAll = async (): Promise<unknown[]> => {
    const errors: unknown[] = [];
    await runSteps(front, errors);
    await runSteps([...stops].reverse(), errors);
    await nc.drain().catch(() => undefined);
    await runSteps([...closes].reverse(), errors);
    return errors;
  };

  try {
    const retry = retryOverrides(config);
    const jsm = await jetstreamManager(nc);
    await ensureTopology(jsm, { replicas: config.MEMEX_NATS_REPLICAS, retry, logger });
    const blobs = await openBlobStore(nc, config);
    stops.push(() => blobs.close());
    const keyring = await Keyring.open(nc, { replicas: config.MEMEX_NATS_REPLICAS, deflate: config.MEMEX_SEAL_DEFLATE });
    stops.push(() => keyring.close());
    const metrics = new Metrics();
    const scope: ServiceScope = {
      service,
      instance,
      logger,
      metrics,
      nc,
      jsm,
      js: jetstream(nc),
      blobs,
      keyring,
      content: new ContentStore(blobs, keyring),
      retry,
      onStop: (step) => void stops.push(step),
      onClose: (step) => void closes.push(step),
    };
    const started = await start(scope);

    const check = async () => {
      const { ready, details } = await started.health();
      return { ready: (ready ?? true) && !nc.isClosed(), ...(details ? { details } : {}) };
    };
    const subscriptions = [...(started.subscriptions ?? []), serveMetrics(nc, service, instance, metrics)];
    // The gateway answers health over HTTPS and pings the others; it has no health subject.
    if (service !== 'gateway') subscriptions.push(serveHealth(nc, service, instance, check));
    front = [() => subscriptions.forEach((sub) => sub.unsubscribe())];
    await subscriptionsServed(nc);
    const healthServer: Server | undefined = config.MEMEX_HEALTH_PORT
      ? await startHealthServer(config.MEMEX_HEALTH_PORT, service, instance, check, started.operatorMetrics ? { metrics: started.operatorMetrics } : {})
      : undefined;
    if (healthServer) front.unshift(() => healthServer.close());
    started.served?.();
    logger.info(started.ready.fields, started.ready.message);

    let stopping: Promise<void> | undefined;
    return {
      ...started.exports,
      instance,
      logger,
      stop() {
        stopping ??= stopAll().then((errors) => {
          if (errors.length > 0) throw errors[0];
        });
        return stopping;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
