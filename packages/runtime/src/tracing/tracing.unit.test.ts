import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../logger';
import { activeTraceMeta, extractTrace, inSpan, injectTrace, tracingOn } from './context';
import { TracingConfigError, tracingSettings } from './settings';
import { startTracing, type Tracing } from './tracing';

const logger = silentLogger();
const identity = { serviceName: 'memex-test', instance: 'i-1', logger };

interface Received {
  path: string;
  contentType: string | undefined;
  tenant: string | undefined;
  body: Buffer;
}

/** An OTLP/HTTP receiver on loopback that records every export it gets. */
async function receiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], tenant: req.headers['x-tenant'] as string | undefined, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise((r) => server.close(() => r())) };
}

let running: Tracing | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe('startTracing', () => {
  it('without an OTLP endpoint registers nothing: no provider, no propagator, no header, no span', async () => {
    running = await startTracing(identity, { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' });
    expect(running.enabled).toBe(false);
    expect(tracingOn()).toBe(false);
    expect(propagation.fields()).toEqual([]);
    const span = trace.getTracer('t').startSpan('s');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe('00000000000000000000000000000000');
    const hdrs = natsHeaders();
    injectTrace(hdrs);
    expect(hdrs.keys()).toEqual([]);
    let inside: unknown = 'unset';
    await inSpan('work', {}, async (s) => {
      inside = s;
      expect(activeTraceMeta()).toEqual({});
    });
    expect(inside).toBeUndefined();
  });

  it('OTEL_SDK_DISABLED=true keeps it off with an endpoint set', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_SDK_DISABLED: 'true' }, { serviceName: 's', serviceVersion: '1', instance: 'i' })).toBeUndefined();
  });

  it('refuses a protocol or sampler it does not support, naming the variable', async () => {
    const defaults = { serviceName: 's', serviceVersion: '1', instance: 'i' };
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, defaults)).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_SAMPLER: 'sometimes' }, defaults)).toThrow(TracingConfigError);
    await expect(startTracing(identity, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).rejects.toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(tracingOn()).toBe(false);
  });

  it('with an endpoint exports spans as OTLP/JSON with the resource the variables name, flushed on stop', async () => {
    const otlp = await receiver();
    try {
      running = await startTracing(identity, {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=memex',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      });
      expect(running.enabled).toBe(true);
      const hdrs = natsHeaders();
      await inSpan('outer', { attributes: { 'memex.test': 1 } }, async () => {
        injectTrace(hdrs);
        await inSpan('inner', { parent: extractTrace(hdrs) }, async () => undefined);
      });
      expect(hdrs.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      await running.stop();
      running = undefined;
      expect(tracingOn()).toBe(false);
      expect(otlp.received.length).toBeGreaterThan(0);
      const [first] = otlp.received;
      expect(first!.path).toBe('/v1/traces');
      expect(first!.contentType).toContain('application/json');
      expect(first!.tenant).toBe('memex');
      const body = JSON.parse(otlp.received.map((r) => r.body.toString()).join('')) as {
        resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string; traceId: string; parentSpanId?: string; spanId: string }[] }[] }[];
      };
      const attrs = Object.fromEntries(body.resourceSpans[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue]));
      expect(attrs['service.name']).toBe('memex-test');
      expect(attrs['deployment.environment.name']).toBe('test');
      const spans = body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
      const outer = spans.find((s) => s.name === 'outer')!;
      const inner = spans.find((s) => s.name === 'inner')!;
      expect(inner.traceId).toBe(outer.traceId);
      expect(inner.parentSpanId).toBe(outer.spanId);
    } finally {
      await otlp.close();
    }
  });

  it('puts trace_id and span_id on log lines written inside a span while on, and nothing while off', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ service: 'test', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
    await inSpan('off', {}, async () => log.info('while off'));
    const otlp = await receiver();
    try {
      running = await startTracing(identity, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      let ids: { traceId: string; spanId: string } | undefined;
      await inSpan('logged', {}, async (span) => {
        ids = span!.spanContext();
        log.info('inside');
      });
      log.info('outside');
      expect(lines.map((l) => l.msg)).toEqual(['while off', 'inside', 'outside']);
      expect(lines[0]).not.toHaveProperty('trace_id');
      expect(lines[1]).toMatchObject({ trace_id: ids!.traceId, span_id: ids!.spanId });
      expect(lines[2]).not.toHaveProperty('trace_id');
    } finally {
      await running?.stop();
      running = undefined;
      await otlp.close();
    }
  });
});
