/**
 * Trace context for the hot path: the only tracing module every service imports eagerly. It needs
 * `@opentelemetry/api` alone (a few kB); while tracing is off every function returns at its first
 * line, so no context is read, no header is written and no span is made.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import type { MsgHdrs } from '@nats-io/nats-core';
import { MemexError } from '@memex/contracts';

export { SpanKind } from '@opentelemetry/api';
export type { Context, Span } from '@opentelemetry/api';

let on = false;

/** True once `startTracing` has registered a provider in this process. */
export function tracingOn(): boolean {
  return on;
}

/** @internal set by startTracing and its stop. */
export function setTracingOn(value: boolean): void {
  on = value;
}

const TRACER = '@memex/runtime';

const natsSetter: TextMapSetter<MsgHdrs> = { set: (headers, key, value) => headers.set(key, value) };
const natsGetter: TextMapGetter<MsgHdrs | undefined> = {
  get: (headers, key) => headers?.get(key) || undefined,
  keys: (headers) => (headers ? headers.keys() : []),
};

/** Writes the active (or given) context's `traceparent`/`tracestate` into NATS headers. */
export function injectTrace(headers: MsgHdrs, ctx?: Context): void {
  if (!on) return;
  propagation.inject(ctx ?? context.active(), headers, natsSetter);
}

/** The context a message's `traceparent`/`tracestate` carry (the root context when none, or off). */
export function extractTrace(headers: MsgHdrs | undefined): Context {
  if (!on) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, natsGetter);
}

/** The trace context a stored event keeps so the outbox can publish it later, beside the request id. */
export interface TraceMeta {
  traceparent?: string;
  tracestate?: string;
}

/** The active context as `traceparent`/`tracestate` values; empty when off or outside a span. */
export function activeTraceMeta(): TraceMeta {
  if (!on) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
}

/** The context a `Record` of headers carries (an HTTP request's, a stored event's meta). */
export function extractTraceFrom(carrier: Record<string, string | string[] | undefined>): Context {
  if (!on) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; the active context when absent. */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `fn` inside a new active span that ends when `fn` settles; an unexpected error marks it
 * failed (a `MemexError` is an answer, recorded by its code). Off: `fn(undefined)` and nothing else
 * (options given as a function are not even built).
 */
export function inSpan<T>(name: string, spanOptions: SpanOptions | (() => SpanOptions), fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!on) return fn(undefined);
  const options = typeof spanOptions === 'function' ? spanOptions() : spanOptions;
  const tracer = trace.getTracer(TRACER);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}), ...(options.links ? { links: options.links } : {}) },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        failSpan(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Starts a span the caller ends (one that outlives a callback: an HTTP request, a stream). */
export function startSpan(name: string, options: SpanOptions): Span | undefined {
  if (!on) return undefined;
  return trace
    .getTracer(TRACER)
    .startSpan(
      name,
      { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}), ...(options.links ? { links: options.links } : {}) },
      options.parent ?? context.active(),
    );
}

/** Runs `fn` with `span` active (as is, when off or no span). */
export function withSpan<T>(span: Span | undefined, fn: () => T): T {
  if (!span) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Records an error on a span: a `MemexError` by its code, anything else as a failure. */
export function failSpan(span: Span | undefined, error: unknown): void {
  if (!span) return;
  if (error instanceof MemexError) {
    span.setAttribute('error.type', error.code);
    if (error.code === 'Internal' || error.code === 'Timeout' || error.code === 'ServiceUnavailable') span.setStatus({ code: SpanStatusCode.ERROR, message: error.code });
    return;
  }
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** The current trace and span id as log fields (pino mixin); empty outside a span. */
export function logTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Attributes of the messaging semantic conventions for one NATS message. */
export function messagingAttributes(operation: 'send' | 'receive' | 'process', destination: string, extra: Attributes = {}): Attributes {
  return { 'messaging.system': 'nats', 'messaging.operation.type': operation, 'messaging.operation.name': operation, 'messaging.destination.name': destination, ...extra };
}
