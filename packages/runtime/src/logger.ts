import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  instanceId?: string;
  level?: string;
}

/** JSON logs on stdout, one line per entry, with the service and instance on every line. */
export function createLogger({ service, instanceId, level = 'info' }: LoggerOptions): Logger {
  return pino({
    level,
    base: { service, ...(instanceId ? { instance: instanceId } : {}) },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that drops everything: for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
