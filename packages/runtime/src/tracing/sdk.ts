/**
 * The OpenTelemetry SDK, imported only by `startTracing` when an OTLP endpoint is configured: a
 * tracer provider with a batch processor and an OTLP/HTTP exporter (protobuf or JSON), W3C trace
 * context as the propagator and AsyncLocalStorage as the context manager.
 */
import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from '../logger';
import { TracingConfigError, type TracingSettings } from './settings';

export interface RunningSdk {
  stop(): Promise<void>;
}

/** The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name (default parentbased_always_on). */
export function samplerFrom(settings: Pick<TracingSettings, 'sampler' | 'samplerArg'>): Sampler {
  const ratio = () => {
    if (settings.samplerArg === undefined) return 1;
    const value = Number(settings.samplerArg);
    if (!Number.isFinite(value) || value < 0 || value > 1) throw new TracingConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${settings.samplerArg}"`);
    return value;
  };
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
  }
}

export function startSdk(settings: TracingSettings, logger: Logger): RunningSdk {
  diag.setLogger(
    {
      error: (message, ...args) => logger.warn({ otel: args }, `opentelemetry: ${message}`),
      warn: (message, ...args) => logger.warn({ otel: args }, `opentelemetry: ${message}`),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: settings.serviceVersion, 'service.instance.id': settings.instance }))
    .merge(resourceFromAttributes(settings.resourceAttributes));
  // Timeout and compression the exporters read from OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT/_COMPRESSION themselves.
  const target = { url: settings.url, headers: settings.headers };
  const exporter = settings.protocol === 'http/json' ? new OtlpJsonExporter(target) : new OtlpProtoExporter(target);
  const provider = new TracerProvider({ resource, sampler: samplerFrom(settings), spanProcessors: [new BatchSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  return {
    async stop() {
      // Flushes what the batch processor still holds, then unregisters everything.
      await provider.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'could not flush the last spans'));
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}
