import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Directory, FeedSpaces, WebhookStore, type Keyring, type Logger, type Metrics, type RetryOverrides } from '@memex/runtime';
import type { MemoCommandService } from '../memo/handlers';
import { startWebhookDispatcher } from '../webhooks/dispatcher';
import type { FeedConfig } from './config';
import { startFeedProjector } from './projector';

import { ensureFeedStreams } from './topology';

export interface EventsOutOptions {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  keyring: Keyring;
  commands: MemoCommandService;
  config: FeedConfig;
  replicas: number;
  logger: Logger;
  metrics?: Metrics;
  retry?: RetryOverrides;
  clock?: () => Date;
}

/** The memo service's events out: the feed's streams, its projector, and the webhook dispatcher. */
export async function startEventsOut(options: EventsOutOptions): Promise<{ stop(): Promise<void> }> {
  const { nc, js, jsm, keyring, commands, config, replicas, logger, metrics, retry, clock } = options;
  await ensureFeedStreams(jsm, { retentionMs: config.retentionMs, replicas });
  const spaces = await FeedSpaces.open(nc, replicas);
  const projector = await startFeedProjector({ js, keyring, commands, spaces, logger, ...(metrics ? { metrics } : {}), ...(retry ? { retry } : {}) });
  const dispatcher = await startWebhookDispatcher({
    js,
    keyring,
    jsm,
    store: await WebhookStore.open(nc, replicas),
    directory: await Directory.open(nc, { replicas }),
    config,
    logger: logger.child({ component: 'webhooks' }),
    ...(metrics ? { metrics } : {}),
    ...(clock ? { clock } : {}),
  });
  return {
    async stop() {
      await dispatcher.stop();
      await projector.stop();
    },
  };
}
