/**
 * Tracing across the stack as `pnpm start` runs it: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at
 * an OTLP/HTTP receiver in this test (JSON once, protobuf once), each HTTP request is one trace that
 * follows it through NATS to every service that worked on it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { multipart } from '../support/multipart';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlpReceiver';
import { startProcessStack, type ProcessStack } from '../support/processStack';

const SERVER = 2;
const SERVICES = ['memex-gateway', 'memex-memo', 'memex-indexer', 'memex-agent', 'memex-extractor'];

describe.each(['http/json', 'http/protobuf'] as const)('tracing over OTLP %s', (protocol) => {
  let otlp: OtlpReceiver;
  let stack: ProcessStack;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, ['--no-restart']);
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await otlp?.close();
  });

  it('makes each request one trace through gateway, memo, indexer, agent and extractor', async () => {
    const call = <T>(method: string, url: string, body?: unknown, headers?: Record<string, string>) =>
      httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });

    // The client's own trace: the gateway continues it.
    const clientTrace = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const created = await call<{ memo_uuid: string }>(
      'POST',
      '/api/v1/memo',
      { title: 'Fog signals', content: 'Lighthouses sound fog signals when visibility drops. Keepers log every signal in the station book.' },
      { traceparent: `00-${clientTrace}-${clientSpan}-01` },
    );
    expect(created.status, created.text).toBe(200);
    const memoId = created.body.memo_uuid;
    await eventually(async () => {
      const res = await call<Memo>('GET', `/api/v1/memo/${memoId}`);
      return res.status === 200 && !res.body.pending ? res.body : undefined;
    }, 60_000);

    const form = multipart({ name: 'keepers.txt', bytes: Buffer.from('The keeper trims the wick at dusk and winds the clockwork at midnight.\n'), type: 'text/plain' });
    const uploaded = await httpsJson<{ memo_uuid: string }>('POST', `${stack.base}/api/v1/memo`, { key: stack.key, agent: stack.agent, raw: { bytes: form.payload, contentType: form.contentType } });
    expect(uploaded.status, uploaded.text).toBe(200);
    await eventually(async () => {
      const res = await call<Memo>('GET', `/api/v1/memo/${uploaded.body.memo_uuid}`);
      return res.status === 200 && !res.body.pending ? res.body : undefined;
    }, 60_000);

    const searched = await call('POST', '/api/v1/search', { query: 'fog signals', search_method: 'chunk_vector_search' });
    expect(searched.status, searched.text).toBe(200);
    const chat = await call<string>('POST', '/api/v1/chat', { query: 'When do keepers sound fog signals?', stream: true });
    expect(chat.status, chat.text).toBe(200);
    expect(chat.headers['content-type']).toContain('text/event-stream');

    const serverSpan = (route: string, method = 'POST', nth = 0) => otlp.spans.filter((s) => s.kind === SERVER && s.attributes['http.route'] === route && s.attributes['http.request.method'] === method)[nth];
    const inTrace = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);
    // A consumer's batch of several events is one span in a trace of its own, linked to each event's
    // trace: the work under it (an extraction, an embedding) belongs to the linked trace too.
    const linkedTo = (traceId: string) => {
      const batches = new Set(otlp.spans.filter((s) => s.links.some((l) => l.traceId === traceId)).map((s) => s.traceId));
      return otlp.spans.filter((s) => batches.has(s.traceId));
    };
    const servicesOf = (spans: ReceivedSpan[]) => new Set(spans.map((s) => s.service));

    // The batch processor exports every few seconds: wait for the last hops of each request.
    const traces = await eventually(
      () => {
        const post = serverSpan('/api/v1/memo');
        const upload = serverSpan('/api/v1/memo', 'POST', 1);
        const search = serverSpan('/api/v1/search');
        const chatSpan = serverSpan('/api/v1/chat');
        if (!post || !upload || !search || !chatSpan) return undefined;
        const postSpans = [...inTrace(post.traceId), ...linkedTo(post.traceId)];
        const uploadSpans = [...inTrace(upload.traceId), ...linkedTo(upload.traceId)];
        const done =
          ['memex-memo', 'memex-indexer', 'memex-agent'].every((s) => servicesOf(postSpans).has(s)) &&
          servicesOf(uploadSpans).has('memex-extractor') &&
          servicesOf(inTrace(search.traceId)).has('memex-indexer') &&
          servicesOf(inTrace(chatSpan.traceId)).has('memex-agent') &&
          postSpans.some((s) => s.name.startsWith('summarize')) &&
          postSpans.some((s) => s.name.startsWith('index putChunks')) &&
          uploadSpans.some((s) => s.name === 'extract') &&
          inTrace(chatSpan.traceId).some((s) => s.name.startsWith('chat '));
        return done ? { post, upload, search, chat: chatSpan, postSpans, uploadSpans } : undefined;
      },
      60_000,
      250,
    );

    expect(otlp.contentTypes).toEqual(new Set([protocol === 'http/json' ? 'application/json' : 'application/x-protobuf']));
    // An incoming traceparent is continued: the POST's server span is the client span's child.
    expect(traces.post.traceId).toBe(clientTrace);
    expect(traces.post.parentSpanId).toBe(clientSpan);
    expect(traces.post.service).toBe('memex-gateway');
    expect(traces.post.name).toBe('POST /api/v1/memo');
    expect(traces.post.attributes['http.response.status_code']).toBe(200);

    // One trace per request: four requests, four traces, each with exactly one HTTP server span of ours.
    const requestTraces = [traces.post, traces.upload, traces.search, traces.chat].map((s) => s.traceId);
    expect(new Set(requestTraces).size).toBe(4);
    for (const traceId of requestTraces) {
      expect(inTrace(traceId).filter((s) => s.kind === SERVER && s.service === 'memex-gateway')).toHaveLength(1);
    }
    // The GETs that polled for processing are traces of their own, never mixed into the POST's.
    const gets = otlp.spans.filter((s) => s.kind === SERVER && s.attributes['http.request.method'] === 'GET');
    expect(gets.length).toBeGreaterThan(0);
    for (const get of gets) expect(requestTraces).not.toContain(get.traceId);

    // The POST's trace: the memo service handles the command; the indexer and agent process its events.
    const memoHandling = traces.postSpans.find((s) => s.service === 'memex-memo' && s.attributes['messaging.operation.type'] === 'process');
    expect(memoHandling, 'the memo service handling the create command').toBeDefined();
    expect(memoHandling!.attributes['messaging.system']).toBe('nats');
    expect(String(memoHandling!.attributes['messaging.destination.name'])).toMatch(/create/);
    for (const service of ['memex-indexer', 'memex-agent']) {
      const processing = traces.postSpans.filter((s) => s.service === service && s.attributes['messaging.operation.type'] === 'process');
      expect(processing.length, `${service} processing the memo's events`).toBeGreaterThan(0);
      for (const span of processing) expect(span.attributes['messaging.system']).toBe('nats');
    }
    // The search's query is answered by the indexer inside the search's trace.
    expect(inTrace(traces.search.traceId).some((s) => s.service === 'memex-indexer' && s.kind === SERVER && s.attributes['messaging.system'] === 'nats')).toBe(true);

    // The work inside: the embedder and the index write, the LLM (model, tokens), the extraction.
    const embed = traces.postSpans.find((s) => s.service === 'memex-indexer' && s.name.startsWith('embed '));
    expect(embed?.attributes['gen_ai.request.model'], 'the embedder span names its model').toBeTypeOf('string');
    expect(traces.postSpans.find((s) => s.service === 'memex-indexer' && s.name.startsWith('index putChunks'))?.attributes['db.operation.name']).toMatch(/^putChunks/);
    expect(traces.postSpans.find((s) => s.service === 'memex-agent' && s.name.startsWith('summarize'))?.attributes['gen_ai.provider.name']).toBe('extractive');
    const llmCall = inTrace(traces.chat.traceId).find((s) => s.service === 'memex-agent' && s.name.startsWith('chat '));
    expect(llmCall?.attributes['gen_ai.operation.name']).toBe('chat');
    expect(Number(llmCall?.attributes['gen_ai.usage.output_tokens'])).toBeGreaterThan(0);
    expect(traces.uploadSpans.find((s) => s.service === 'memex-extractor' && s.name === 'extract')?.attributes['memex.extract.format']).toBeTypeOf('string');

    // Every service names itself; every server span of the gateway names its route.
    expect(servicesOf(otlp.spans)).toEqual(new Set(SERVICES));
    for (const span of otlp.spans.filter((s) => s.kind === SERVER && s.service === 'memex-gateway' && s.attributes['http.response.status_code'] !== 404)) {
      expect(span.attributes['http.route'], span.name).toBeTypeOf('string');
    }
  }, 180_000);
});
