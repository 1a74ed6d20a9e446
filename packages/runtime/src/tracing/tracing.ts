import type { Logger } from '../logger';
import { setTracingOn } from './context';
import type { RunningSdk } from './sdk';
import { tracingSettings } from './settings';

export interface Tracing {
  readonly enabled: boolean;
  /** Flushes the spans still buffered and unregisters the provider (once the last user stops). */
  stop(): Promise<void>;
}

const OFF: Tracing = { enabled: false, stop: async () => undefined };

let running: { sdk: Promise<RunningSdk>; users: number } | undefined;

/**
 * Starts OpenTelemetry tracing for this process when `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; otherwise nothing is imported or registered. The
 * SDK is process-wide: services sharing a process (`--single-process`) share the first one's
 * provider, so set OTEL_SERVICE_NAME there. A wrong OTEL_* value throws a `TracingConfigError`.
 */
export async function startTracing(
  options: { serviceName: string; instance: string; logger: Logger; serviceVersion?: string },
  env: Record<string, string | undefined> = process.env,
): Promise<Tracing> {
  const settings = tracingSettings(env, { serviceName: options.serviceName, serviceVersion: options.serviceVersion ?? '0.1.0', instance: options.instance });
  if (!settings) return OFF;
  if (!running) {
    const sdk = import('./sdk').then(({ startSdk }) => {
      const started = startSdk(settings, options.logger);
      setTracingOn(true);
      return started;
    });
    running = { sdk, users: 0 };
    try {
      await sdk;
    } catch (error) {
      running = undefined;
      throw error;
    }
  }
  const current = running;
  current.users += 1;
  await current.sdk;
  let stopped = false;
  return {
    enabled: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      current.users -= 1;
      if (current.users > 0) return;
      if (running === current) running = undefined;
      setTracingOn(false);
      await (await current.sdk).stop();
    },
  };
}
