import { ConfigError } from '../configError';

/** Which OpenTelemetry settings a process runs with, from the standard OTEL_* variables. */
export const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

export interface TracingSettings {
  serviceName: string;
  serviceVersion: string;
  instance: string;
  protocol: 'http/protobuf' | 'http/json';
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over them. */
  headers: Record<string, string>;
  /** OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME over its service.name. */
  resourceAttributes: Record<string, string>;
  sampler: TracesSampler;
  samplerArg: string | undefined;
}

/** A wrong OTEL_* value: the message names the variable; the process stops as for any setting. */
export class TracingConfigError extends ConfigError {
  override name = 'TracingConfigError';
}

/**
 * The tracing settings `env` asks for, or undefined when no OTLP endpoint is set (tracing off).
 * `OTEL_SDK_DISABLED=true` turns it off whatever else is set, as the specification says.
 */
export function tracingSettings(env: Record<string, string | undefined>, defaults: { serviceName: string; serviceVersion: string; instance: string }): TracingSettings | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new TracingConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not supported), got "${protocol}"`);
  }
  const sampler = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim();
  if (!(TRACES_SAMPLERS as readonly string[]).includes(sampler)) {
    throw new TracingConfigError(`OTEL_TRACES_SAMPLER must be one of ${TRACES_SAMPLERS.join(', ')}, got "${sampler}"`);
  }
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const url = specific || `${endpoint.trim().replace(/\/+$/, '')}/v1/traces`;
  try {
    new URL(url);
  } catch {
    throw new TracingConfigError(`${specific ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} must be a URL, got "${endpoint}"`);
  }
  const headers = { ...keyValues(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') };
  const resourceAttributes = keyValues(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES');
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  if (serviceName) resourceAttributes['service.name'] = serviceName;
  return {
    ...defaults,
    protocol,
    url,
    headers,
    resourceAttributes,
    sampler: sampler as TracesSampler,
    samplerArg: env.OTEL_TRACES_SAMPLER_ARG?.trim() || undefined,
  };
}

/** `key1=value1,key2=value2` with percent-encoded values, as the OTEL_* list variables are written. */
function keyValues(text: string | undefined, variable: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (!key) throw new TracingConfigError(`${variable} must be key=value pairs separated by commas, got "${pair.trim()}"`);
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new TracingConfigError(`${variable} has a malformed percent-encoding in "${key}"`);
    }
  }
  return out;
}
