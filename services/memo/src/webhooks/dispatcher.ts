import { AckPolicy, DeliverPolicy, type ConsumerConfig, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import {
  Streams,
  Subjects,
  WebhookConsumers,
  feedEventId,
  webhookWants,
  type StoredFeedEvent,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookRecord,
} from '@memex/contracts';
import {
  decodeJson,
  encodeJson,
  feedSpaceCheck,
  openFeedEvent,
  openWebhookSecret,
  webhookHeaders,
  type Directory,
  type FeedSpaceCheck,
  type Keyring,
  type Logger,
  type Metrics,
  type WebhookStore,
} from '@memex/runtime';
import type { FeedConfig } from '../feed/config';
import { sendWebhook, type SendResult } from './send';

export interface WebhookDispatcherOptions {
  js: JetStreamClient;
  /** Opens the reference ids the feed keeps sealed. */
  keyring: Keyring;
  jsm: JetStreamManager;
  store: WebhookStore;
  /** Tells whether the key that registered a webhook still lives. */
  directory: Pick<Directory, 'getProject'>;
  config: FeedConfig;
  logger: Logger;
  metrics?: Metrics;
  clock?: () => Date;
}

export interface WebhookDispatcher {
  /** Webhooks this instance is delivering for now. */
  readonly active: number;
  stop(): Promise<void>;
}

function isNotFound(error: unknown): boolean {
  const e = error as { message?: unknown; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10014 || e?.api_error?.err_code === 10059 || /not found/i.test(String(e?.message));
}

/**
 * The durable consumer of one webhook: the feed filtered by its project (by its type when it takes
 * one), from the moment it was created. Explicit acks, no delivery limit (the dispatcher counts the
 * attempts itself), an ack wait past the send timeout so a crashed instance's delivery goes to
 * another after that long.
 */
export function webhookConsumerConfig(record: WebhookRecord, timeoutMs: number): Partial<ConsumerConfig> {
  const single = record.events.length === 1 && record.events[0] !== '*' ? record.events[0] : undefined;
  return {
    durable_name: WebhookConsumers.durable(record.webhook_id),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: record.created_at,
    filter_subject: single ? Subjects.feed(record.project_id, single) : Subjects.feedOfProject(record.project_id),
    ack_wait: nanos(timeoutMs + 5_000),
    max_deliver: -1,
    max_ack_pending: 1_000,
  };
}

/** Makes a webhook's consumer unless it exists (several instances may race: the loser finds the winner's). */
export async function ensureWebhookConsumer(jsm: JetStreamManager, record: WebhookRecord, timeoutMs: number): Promise<void> {
  const name = WebhookConsumers.durable(record.webhook_id);
  try {
    await jsm.consumers.info(Streams.feed, name);
    return;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  try {
    await jsm.consumers.add(Streams.feed, webhookConsumerConfig(record, timeoutMs));
  } catch (error) {
    await jsm.consumers.info(Streams.feed, name).catch(() => {
      throw error;
    });
  }
}

class WebhookRunner {
  private stopping = false;
  private messages: { close(): Promise<void | Error> } | undefined;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private space: Promise<FeedSpaceCheck> | undefined;
  private secret: Promise<string | undefined> | undefined;

  constructor(
    public record: WebhookRecord,
    private readonly options: WebhookDispatcherOptions,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const { js, jsm, config } = this.options;
    await ensureWebhookConsumer(jsm, this.record, config.timeoutMs);
    if (this.stopping) return;
    const consumer = await js.consumers.get(Streams.feed, WebhookConsumers.durable(this.record.webhook_id));
    const messages = await consumer.consume({ max_messages: config.concurrency, expires: 5_000 });
    this.messages = messages;
    this.loop = (async () => {
      for await (const msg of messages) {
        if (this.stopping) {
          msg.nak();
          continue;
        }
        const p = this.deliver(msg).catch((error: unknown) => this.logger.error({ err: error }, 'webhook delivery failed unexpectedly'));
        this.inFlight.add(p);
        void p.finally(() => this.inFlight.delete(p));
        if (this.inFlight.size >= config.concurrency) await Promise.race(this.inFlight);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.messages?.close();
    await this.loop?.catch(() => undefined);
    await Promise.allSettled(this.inFlight);
  }

  private async deliver(msg: JsMsg): Promise<void> {
    const { config } = this.options;
    const record = this.record;
    let stored: StoredFeedEvent;
    try {
      stored = decodeJson<StoredFeedEvent>(msg.data);
    } catch {
      msg.term('unreadable feed message');
      return;
    }
    if (stored.project_id !== record.project_id || !webhookWants(record.events, stored.type)) {
      msg.ack();
      return;
    }
    const stop = await this.stopReason();
    if (stop) {
      // Left unacknowledged: the consumer goes with the webhook, and nothing more is sent.
      await this.disable(stop);
      return;
    }
    // Only events of memos inside the registering key's space.
    // Both made once per runner; a failed attempt (NATS away) is tried again at the next delivery.
    this.space ??= feedSpaceCheck(this.options.keyring, record.project_id, record.filters ?? []).catch((error: unknown) => {
      this.space = undefined;
      throw error;
    });
    const inSpace = await this.space;
    if (!(await inSpace(stored))) {
      msg.ack();
      return;
    }
    this.secret ??= openWebhookSecret(this.options.keyring, record).catch((error: unknown) => {
      this.secret = undefined;
      throw error;
    });
    const secret = await this.secret;
    if (secret === undefined) {
      // Its key is shredded: the webhook is being deleted.
      msg.ack();
      return;
    }
    const event = { id: feedEventId(msg.seq), ...(await openFeedEvent(this.options.keyring, stored)) };
    const json = JSON.stringify(event);
    const now = this.clock();
    const result = await sendWebhook(new URL(record.url), json, webhookHeaders(secret, event.id, Math.floor(now.getTime() / 1000), json), {
      timeoutMs: config.timeoutMs,
      allowPrivate: config.allowPrivate,
    });
    const attempt = msg.info.deliveryCount;
    let status: WebhookDeliveryStatus;
    if (result.ok) {
      msg.ack();
      status = 'delivered';
    } else if (attempt <= config.retryDelaysMs.length) {
      msg.nak(config.retryDelaysMs[attempt - 1]);
      status = 'retrying';
    } else {
      msg.term('webhook delivery failed for good');
      status = 'failed';
    }
    this.options.metrics?.counter('memex_webhook_deliveries_total', 'Webhook delivery attempts, by outcome').inc({ status });
    await this.recordAttempt(event.id, attempt, status, result);
    await this.track(result.ok);
  }

  /**
   * Why the webhook may not deliver any more, if so: the key or token that registered it expired,
   * or that key was revoked (looked up before every delivery, so none goes out after the revocation
   * is recorded; a failed lookup delivers rather than disable the webhook for good).
   */
  private async stopReason(): Promise<string | undefined> {
    const { record } = this;
    if (record.expires_at && Date.parse(record.expires_at) <= this.clock().getTime()) return 'the key that registered it expired';
    const keyId = record.key_id;
    if (!keyId) return undefined;
    const live = await this.options.directory.getProject(record.project_id).then(
      (project) => project?.keyHashes.some((hash) => hash.startsWith(keyId)) ?? false,
      () => true,
    );
    return live ? undefined : 'the key that registered it was revoked';
  }

  private async disable(reason: string): Promise<void> {
    if (this.record.disabled) return;
    this.record = { ...this.record, disabled: true, disabled_reason: reason };
    const current = await this.options.store.get(this.record.project_id, this.record.webhook_id).catch(() => undefined);
    if (current && !current.disabled) await this.options.store.put({ ...current, disabled: true, disabled_reason: reason });
    this.logger.warn({ webhookId: this.record.webhook_id, reason }, 'webhook disabled');
  }

  private clock(): Date {
    return this.options.clock?.() ?? new Date();
  }

  private async recordAttempt(eventId: string, attempt: number, status: WebhookDeliveryStatus, result: SendResult): Promise<void> {
    const delivery: WebhookDelivery = {
      event_id: eventId,
      attempt,
      status,
      at: this.clock().toISOString(),
      response_status: result.status,
      ...(result.error ? { error: result.error.slice(0, 500) } : {}),
    };
    try {
      await this.options.js.publish(Subjects.webhookDeliveries(this.record.webhook_id), encodeJson(delivery));
    } catch (error) {
      this.logger.warn({ err: error }, 'could not record a webhook delivery');
    }
  }

  /** Keeps when failures began; a webhook failing for `disableAfterMs` is disabled, saying why. */
  private async track(ok: boolean): Promise<void> {
    const { store, config } = this.options;
    const record = this.record;
    const now = this.clock();
    let next: WebhookRecord | undefined;
    if (ok && record.failing_since !== null) next = { ...record, failing_since: null };
    else if (!ok && record.failing_since === null) next = { ...record, failing_since: now.toISOString() };
    else if (!ok && record.failing_since !== null && now.getTime() - Date.parse(record.failing_since) >= config.disableAfterMs) {
      next = {
        ...record,
        disabled: true,
        disabled_reason: `every delivery since ${record.failing_since} failed`,
      };
    }
    if (!next) return;
    this.record = next;
    // A webhook deleted meanwhile stays deleted.
    const current = await store.get(record.project_id, record.webhook_id).catch(() => undefined);
    if (current) await store.put({ ...current, failing_since: next.failing_since, disabled: next.disabled, disabled_reason: next.disabled_reason });
    if (next.disabled) this.logger.warn({ webhookId: record.webhook_id }, 'webhook disabled: its deliveries kept failing');
  }
}

/**
 * Delivers the feed to every enabled webhook, on every instance that runs it: each webhook is a
 * durable consumer, so instances share its deliveries (each message to one of them, again after a
 * crash) and a restart resumes where the consumer stands. Follows registrations by a KV watch.
 */
export async function startWebhookDispatcher(options: WebhookDispatcherOptions): Promise<WebhookDispatcher> {
  const { jsm, store, logger } = options;
  const runners = new Map<string, WebhookRunner>();
  let chain = Promise.resolve();
  const serially = (fn: () => Promise<void>) => {
    chain = chain.then(fn).catch((error: unknown) => logger.error({ err: error }, 'webhook registration change failed'));
  };
  const follow = await store.follow((key, record) =>
    serially(async () => {
      const running = runners.get(key);
      if (record && !record.disabled) {
        if (running && running.record.url === record.url && running.record.events.join() === record.events.join()) {
          running.record = record;
          return;
        }
        if (running) await running.stop();
        const runner = new WebhookRunner(record, options, logger.child({ webhookId: record.webhook_id }));
        runners.set(key, runner);
        await runner.start();
        return;
      }
      if (running) {
        runners.delete(key);
        await running.stop();
      }
      if (!record) {
        const webhookId = key.split('.')[1];
        if (webhookId) await jsm.consumers.delete(Streams.feed, WebhookConsumers.durable(webhookId)).catch(() => undefined);
      }
    }),
  );
  await follow.ready;
  await chain;
  return {
    get active() {
      return runners.size;
    },
    async stop() {
      follow.stop();
      await chain;
      await Promise.allSettled([...runners.values()].map((r) => r.stop()));
      runners.clear();
    },
  };
}
