import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { openEventStream } from '../http/eventStream';
import { DeliverPolicy, jetstream, type JsMsg } from '@nats-io/jetstream';
import {
  ErrorResponse,
  EventsPage,
  EventsQuery,
  Streams,
  Subjects,
  feedEventId,
  parseEventsQuery,
  type EventsInput,
  type FeedEvent,
  type StoredFeedEvent,
} from '@memex/contracts';
import { decodeJson, feedSpaceCheck, openFeedEvent, type FeedSpaceCheck, type Keyring } from '@memex/runtime';
import { noteMemoIds } from '../auth/scopes';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';
import { readRange } from '../http/streamRead';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse };

/** Sent as an SSE comment while no event comes, so proxies keep the connection. */
const SSE_KEEPALIVE_MS = 15_000;
/** Memo ids a stream's audit entry names at most (the first ones streamed). */
const SSE_AUDITED_IDS = 1_000;

/** The subject filter for a project's feed: one type's subject when one is asked for, else the whole project. */
function feedFilter(projectId: string, input: EventsInput): string {
  return input.types?.length === 1 ? Subjects.feed(projectId, input.types[0]!) : Subjects.feedOfProject(projectId);
}

/** The feed message's stored event; undefined for one the caller did not ask for (or not its project). */
function storedEvent(msg: JsMsg, projectId: string, input: EventsInput): StoredFeedEvent | undefined {
  let body: StoredFeedEvent;
  try {
    body = decodeJson<StoredFeedEvent>(msg.data);
  } catch {
    return undefined;
  }
  if (body.project_id !== projectId) return undefined;
  if (input.types && !input.types.includes(body.type)) return undefined;
  return body;
}

/** The public event: its id from the stream position, its reference id opened (null once the memo is erased). */
async function toEvent(keyring: Keyring, seq: number, stored: StoredFeedEvent): Promise<FeedEvent> {
  return { id: feedEventId(seq), ...(await openFeedEvent(keyring, stored)) };
}

/** Pages scanned past a narrow space's misses before answering with fewer events: bounds one read. */
const SPACE_SCAN_PAGES = 20;

/**
 * A page of the project's events after `input.after`. With a space, events outside it are skipped
 * and reading goes on until the page is full, or for at most SPACE_SCAN_PAGES reads: then
 * `stoppedAt` is the last sequence looked at, where the next page must start so it goes on.
 */
async function readPage(
  deps: GatewayDeps,
  js: ReturnType<typeof jetstream>,
  projectId: string,
  input: EventsInput,
  inSpace: FeedSpaceCheck | undefined,
): Promise<{ kept: { seq: number; stored: StoredFeedEvent }[]; stoppedAt?: number }> {
  const kept: { seq: number; stored: StoredFeedEvent }[] = [];
  let afterSeq = input.afterSeq;
  for (let pass = 0; pass < (inSpace ? SPACE_SCAN_PAGES : 1); pass++) {
    const read: { seq: number; stored: StoredFeedEvent }[] = [];
    const want = input.limit - kept.length;
    const msgs = await readRange(deps.jsm, js, {
      stream: Streams.feed,
      filter: feedFilter(projectId, input),
      afterSeq,
      limit: want,
      keep: (msg) => {
        const stored = storedEvent(msg, projectId, input);
        if (stored) read.push({ seq: msg.seq, stored });
        return stored !== undefined;
      },
    });
    if (!inSpace) return { kept: read };
    const verdicts = await Promise.all(read.map(({ stored }) => inSpace(stored)));
    kept.push(...read.filter((_, i) => verdicts[i]));
    if (msgs.length < want || kept.length >= input.limit) return { kept };
    afterSeq = read.at(-1)!.seq;
  }
  return { kept, stoppedAt: afterSeq };
}

function wantsStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/event-stream');
}

/**
 * The public event feed: pages of a project's events, oldest first from the start of retention,
 * or (with `Accept: text/event-stream`) a stream of them, resumable by `Last-Event-ID` or `after`.
 */
export function eventRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  // Made on first use: the OpenAPI document builds the app without a connection.
  let jsClient: ReturnType<typeof jetstream> | undefined;
  const js = () => (jsClient ??= jetstream(deps.nc));

  app.get(
    '/api/v1/events',
    {
      config: { access: { scope: 'events:read', action: 'events.read' } },
      schema: {
        operationId: 'listEvents',
        summary: 'Read the project’s event feed',
        description:
          'Memo events (created, updated, processed, failed, deleted, expired), ids only, oldest first. `next` is the cursor to pass as `after`. ' +
          'With `Accept: text/event-stream` the same route streams events as they happen (`id:` and `data:` lines, `: ping` keep-alives), resumable with `Last-Event-ID`.',
        tags: ['events'],
        querystring: EventsQuery,
        response: { 200: EventsPage, ...errors },
      },
    },
    async (request, reply) => {
      const query = (request.query ?? {}) as Record<string, unknown>;
      const ctx = requestContext(deps, request, reply, requestedProject(query));
      const stream = wantsStream(request);
      const lastEventId = request.headers['last-event-id'];
      const input = parseEventsQuery(query, stream && typeof lastEventId === 'string' ? lastEventId : undefined);
      // A scoped caller sees only events of memos inside its space (judged as each memo stood after the event).
      const inSpace = await feedSpaceCheck(deps.content.keyring, ctx.projectId, ctx.space);
      if (stream) return streamEvents(request, reply, deps, js(), ctx.projectId, input, inSpace);
      const { kept, stoppedAt } = await readPage(deps, js(), ctx.projectId, input, ctx.space.length > 0 ? inSpace : undefined);
      const events = await Promise.all(kept.map(({ seq, stored }) => toEvent(deps.content.keyring, seq, stored)));
      noteMemoIds(request, events.map((e) => e.memo_uuid));
      return { events, next: stoppedAt !== undefined ? feedEventId(stoppedAt) : (events.at(-1)?.id ?? input.after) };
    },
  );
}

async function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: GatewayDeps,
  js: ReturnType<typeof jetstream>,
  projectId: string,
  input: EventsInput,
  inSpace: FeedSpaceCheck,
): Promise<void> {
  const res = openEventStream(request, reply);
  let closed = false;
  let stopConsuming: (() => Promise<unknown>) | undefined;
  let wake: (() => void) | undefined;
  const onClose = () => {
    closed = true;
    void stopConsuming?.();
    wake?.();
  };
  res.once('close', onClose);
  const write = async (chunk: string) => {
    if (closed) return;
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
  };
  let noted = 0;
  const keepalive = setInterval(() => void write(': ping\n\n'), SSE_KEEPALIVE_MS);
  try {
    await write(': ping\n\n');
    // The feed stream appears with the memo service's first start: until then, wait for it.
    while (!closed) {
      try {
        const consumer = await js.consumers.get(Streams.feed, {
          filter_subjects: feedFilter(projectId, input),
          ...(input.afterSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: input.afterSeq + 1 } : { deliver_policy: DeliverPolicy.All }),
        });
        const messages = await consumer.consume({ max_messages: 512 });
        stopConsuming = () => messages.close();
        if (closed) await messages.close();
        for await (const msg of messages) {
          if (closed) break;
          const stored = storedEvent(msg, projectId, input);
          if (!stored || !(await inSpace(stored))) continue;
          const event = await toEvent(deps.content.keyring, msg.seq, stored);
          if (noted++ < SSE_AUDITED_IDS) noteMemoIds(request, [event.memo_uuid]);
          await write(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`);
        }
        break;
      } catch (error) {
        if (closed) break;
        request.log.debug({ err: error }, 'event feed not readable yet; retrying');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 1_000);
        });
      }
    }
  } finally {
    clearInterval(keepalive);
    res.off('close', onClose);
    if (!closed) res.end();
    deps.logger.debug({ projectId }, 'event stream ended');
  }
}
