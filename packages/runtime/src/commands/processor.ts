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
import { runConsumer, type ConsumerRunner } from '../nats/consumer';
import { consumerPolicy, type RetryOverrides } from '../nats/topology';

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
    if (to) nc.publish(to, encodeJson(body));
  };

  return runConsumer({
    js,
    stream: Streams.memoCommands,
    consumer: Consumers.memoCommands,
    logger,
    concurrency,
    ...(metrics ? { metrics } : {}),
    ...(retry ? { retry } : {}),
    handle: async (msg) => {
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
          return { kind: 'ack' };
        }
        commands?.inc({ command: name, outcome: 'failed' });
        if (msg.info.deliveryCount >= maxDeliver) reply(msg, { ok: false, error: { code: 'Internal' } });
        return { kind: 'retry', error };
      }
    },
  });
}
