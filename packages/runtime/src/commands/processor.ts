import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { KeyErasedError } from '../keyring/keyring';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  Consumers,
  Headers,
  MemexError,
  Streams,
  Subjects,
  type CommandReply,
  type MemoCommandName,
  type MemoCommandPayload,
  type MemoCommandResult,
} from '@memex/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics/registry';
import { decodeJson, encodeJson } from '../nats/codec';
import { runConsumer, type ConsumerRunner, type Disposition } from '../nats/consumer';
import type { Span } from '@opentelemetry/api';
import { fitsPayload } from '../nats/payload';
import { consumerPolicy, type RetryOverrides } from '../nats/topology';
import { extractTrace, failSpan, inSpan, messagingAttributes, SpanKind } from '../tracing/context';

export interface CommandContext {
  /** The caller's command id; the same id means the same command (dedupe on redelivery). */
  commandId: string;
  requestId: string | undefined;
  logger: Logger;
}

export type CommandHandlers = {
  [N in MemoCommandName]: (
    payload: MemoCommandPayload<N>,
    context: CommandContext,
  ) => Promise<{ result: MemoCommandResult<N>; eventSeq?: number }>;
};

/**
 * Takes memo commands from the work queue. A command whose deadline has passed is acknowledged and
 * dropped without running: its caller has given up. Expected failures (`MemexError`) are replied
 * and acknowledged; anything else is retried with backoff and replied as `Internal` on the last try.
 */
export function serveMemoCommands(options: {
  nc: NatsConnection;
  js: JetStreamClient;
  logger: Logger;
  handlers: CommandHandlers;
  concurrency?: number;
  metrics?: Metrics;
  retry?: RetryOverrides;
}): Promise<ConsumerRunner> {
  const { nc, js, logger, handlers, concurrency = 64, metrics, retry } = options;
  const commands = metrics?.counter('memex_commands_total', 'Memo commands handled, by command and outcome');
  const maxDeliver = consumerPolicy(Consumers.memoCommands, retry).maxDeliver;

  const reply = (msg: JsMsg, body: CommandReply<unknown>) => {
    const to = msg.headers?.get(Headers.replyTo);
    if (!to) return;
    let data = encodeJson(body);
    if (!fitsPayload(nc, data)) {
      logger.error({ subject: msg.subject, bytes: data.byteLength }, 'command reply exceeds the NATS max_payload; answered ReplyTooLarge');
      data = encodeJson({ ok: false, error: new MemexError('ReplyTooLarge').toWire() } satisfies CommandReply<unknown>);
    }
    try {
      nc.publish(to, data);
    } catch (error) {
      logger.error({ err: error, subject: msg.subject }, 'could not send a command reply');
    }
  };

  return runConsumer({
    js,
    stream: Streams.memoCommands,
    consumer: Consumers.memoCommands,
    logger,
    concurrency,
    ...(metrics ? { metrics } : {}),
    ...(retry ? { retry } : {}),
    handle: (msg) =>
      inSpan(
        `process ${msg.subject}`,
        () => ({
          kind: SpanKind.CONSUMER,
          parent: extractTrace(msg.headers),
          attributes: messagingAttributes('process', msg.subject, { 'messaging.consumer.group.name': Consumers.memoCommands, 'messaging.message.delivery_count': msg.info.deliveryCount }),
        }),
        (span) => handleCommand(msg, span),
      ),
  });

  async function handleCommand(msg: JsMsg, span: Span | undefined): Promise<Disposition> {
    const name = Subjects.memoCommandName(msg.subject);
    const commandId = msg.headers?.get(Headers.correlationId) || `seq-${msg.seq}`;
    const requestId = msg.headers?.get(Headers.requestId) || undefined;
    const log = logger.child({ command: name, commandId, ...(requestId ? { requestId } : {}) });
    const deadline = Number(msg.headers?.get(Headers.deadline) || 0);
    if (deadline > 0 && Date.now() > deadline) {
      log.warn({ lateByMs: Date.now() - deadline }, 'command dropped: its caller gave up');
      commands?.inc({ command: name, outcome: 'dropped_late' });
      return { kind: 'ack' };
    }
    const handler = handlers[name] as CommandHandlers[MemoCommandName] | undefined;
    if (!handler) {
      reply(msg, { ok: false, error: { code: 'InvalidRequest', detail: `unknown command ${name}` } });
      return { kind: 'ack' };
    }
    try {
      const payload = decodeJson<never>(msg.data);
      const { result, eventSeq } = await handler(payload, { commandId, requestId, logger: log });
      reply(msg, { ok: true, result, ...(eventSeq !== undefined ? { eventSeq } : {}) });
      commands?.inc({ command: name, outcome: 'ok' });
      return { kind: 'ack' };
    } catch (error) {
      // A command about an erased memo (its key is gone) is "not found", never retried.
      if (error instanceof MemexError || error instanceof KeyErasedError) {
        const wire = error instanceof MemexError ? error.toWire() : new MemexError('MemoNotFound').toWire();
        reply(msg, { ok: false, error: wire });
        commands?.inc({ command: name, outcome: wire.code });
        span?.setAttribute('error.type', wire.code);
        return { kind: 'ack' };
      }
      commands?.inc({ command: name, outcome: 'failed' });
      failSpan(span, error);
      if (msg.info.deliveryCount >= maxDeliver) reply(msg, { ok: false, error: { code: 'Internal' } });
      return { kind: 'retry', error };
    }
  }
}
