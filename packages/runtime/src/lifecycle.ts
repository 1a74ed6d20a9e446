import type { Logger } from './logger';

/**
 * Runs `stop` once on SIGINT or SIGTERM, then exits. A second signal, or a stop that hangs past
 * `graceMs`, exits at once.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, graceMs = 10_000): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/** A short random id for this process: logs, NATS connection names, health reports. */
export function instanceId(): string {
  return `${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
