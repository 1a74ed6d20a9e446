/**
 * An OTLP/HTTP trace receiver for tests: it accepts `POST /v1/traces` as JSON or protobuf and keeps
 * every span it is sent. Protobuf is read by the minimal wire-format decoder below, written from
 * the OTLP `trace.proto` field numbers, independent of the exporter's own encoder.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  service: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, AttributeValue>;
  links: { traceId: string; spanId: string }[];
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the exports received. */
  contentTypes: Set<string>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
        contentTypes.add(type);
        const body = Buffer.concat(chunks);
        spans.push(...(type === 'application/x-protobuf' ? fromProtobuf(body) : fromJson(JSON.parse(body.toString('utf8')) as JsonRequest)));
        res.writeHead(200, { 'content-type': type || 'application/json' }).end(type === 'application/x-protobuf' ? Buffer.alloc(0) : '{}');
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: JsonKeyValue[]; links?: { traceId: string; spanId: string }[] }[] }[];
  }[];
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

function fromJson(body: JsonRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const service = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        service,
        name: s.name,
        kind: s.kind ?? 0,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        attributes: jsonAttributes(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
      })),
    );
  });
}

/** One protobuf field: its number and its value (a varint as bigint, bytes for length-delimited, fixed as bytes). */
interface Field {
  no: number;
  varint?: bigint;
  bytes?: Buffer;
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    switch (key & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        out.push({ no, bytes: buf.subarray(at, at + 8) });
        at += 8;
        break;
      case 2: {
        const length = Number(varint());
        out.push({ no, bytes: buf.subarray(at, at + length) });
        at += length;
        break;
      }
      case 5:
        out.push({ no, bytes: buf.subarray(at, at + 4) });
        at += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${key & 7}`);
    }
  }
  return out;
}

const sub = (fs: Field[], no: number): Buffer[] => fs.filter((f) => f.no === no && f.bytes).map((f) => f.bytes!);
const first = (fs: Field[], no: number): Buffer | undefined => sub(fs, no)[0];

/** KeyValue { 1: key, 2: AnyValue { 1: string, 2: bool, 3: int64, 4: double } }. */
function protoAttributes(list: Buffer[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list) {
    const f = fields(kv);
    const key = first(f, 1)?.toString('utf8') ?? '';
    const any = fields(first(f, 2) ?? Buffer.alloc(0));
    const v = any[0];
    if (!v) continue;
    if (v.no === 1) out[key] = v.bytes!.toString('utf8');
    else if (v.no === 2) out[key] = v.varint === 1n;
    else if (v.no === 3) out[key] = Number(BigInt.asIntN(64, v.varint!));
    else if (v.no === 4) out[key] = v.bytes!.readDoubleLE(0);
  }
  return out;
}

/**
 * ExportTraceServiceRequest { 1: ResourceSpans { 1: Resource { 1: attributes }, 2: ScopeSpans { 2: Span } } },
 * Span { 1: trace_id, 2: span_id, 4: parent_span_id, 5: name, 6: kind, 9: attributes, 13: Link { 1: trace_id, 2: span_id } }.
 */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  return sub(fields(body), 1).flatMap((rsBuf) => {
    const rs = fields(rsBuf);
    const resource = fields(first(rs, 1) ?? Buffer.alloc(0));
    const service = String(protoAttributes(sub(resource, 1))['service.name'] ?? '');
    return sub(rs, 2).flatMap((ssBuf) =>
      sub(fields(ssBuf), 2).map((spanBuf) => {
        const s = fields(spanBuf);
        return {
          service,
          name: first(s, 5)?.toString('utf8') ?? '',
          kind: Number(s.find((f) => f.no === 6)?.varint ?? 0n),
          traceId: first(s, 1)?.toString('hex') ?? '',
          spanId: first(s, 2)?.toString('hex') ?? '',
          parentSpanId: first(s, 4)?.toString('hex') ?? '',
          attributes: protoAttributes(sub(s, 9)),
          links: sub(s, 13).map((l) => {
            const lf = fields(l);
            return { traceId: first(lf, 1)?.toString('hex') ?? '', spanId: first(lf, 2)?.toString('hex') ?? '' };
          }),
        };
      }),
    );
  });
}
