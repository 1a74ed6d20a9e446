export { CommonEnv, ConfigError, configOrExit, HealthPortEnv, loadEnv, retryOverrides, ServiceEnv } from './config';
export { serviceIdentity, startService } from './service/bootstrap';
export type { HealthCheck, RunningService, ServiceIdentity, ServiceScope, ServiceStarted } from './service/bootstrap';
export { EXIT_CONFIG } from './exitCodes';
export { createLogger, redactSecrets, silentLogger } from './logger';
export type { Logger, LoggerOptions } from './logger';
export { instanceId, onShutdown } from './lifecycle';
export { checkpointAfterErase, GroupCommit, groupCommit, inTransaction, openSqlite, type OpenSqliteOptions } from './sqlite';
export { compressText, decompressText, deflateIfSmaller } from './compression';
export type { SqliteDatabase } from './sqlite';

export { PING_INTERVAL_MS, connectNats, natsConnected, subscriptionsServed } from './nats/connection';
export type { ConnectOptions, NatsAuth } from './nats/connection';
export { decodeJson, EncodedJson, encodeJson } from './nats/codec';
export { fromNatsError, transientNatsError } from './nats/errors';
export { HEADER_ALLOWANCE_BYTES, fitsPayload, payloadBudget } from './nats/payload';
export { publishToStream } from './nats/streamPublish';
export type { PubAck, StreamPublishOptions } from './nats/streamPublish';
export { CONSUMER_POLICY, consumerPolicy, ensureTopology } from './nats/topology';
export type { ConsumerPolicy, RetryOverrides, TopologyOptions } from './nats/topology';
export { waitForConsumer } from './nats/consistency';
export { backoffMs, runConsumer } from './nats/consumer';
export type { ConsumerRunner, Disposition, RunConsumerOptions } from './nats/consumer';

export { CommandClient } from './commands/client';
export type { CommandOutcome, SendOptions } from './commands/client';
export { serveMemoCommands } from './commands/processor';
export type { CommandContext, CommandHandlers } from './commands/processor';

export { query, queryJson, serveQuery } from './queries/query';
export type { QueryContext, QueryHandler, QueryOptions } from './queries/query';

export { decodeMemoEvent, encodeMemoEvent, type EncodedMemoEvent } from './events/codec';
export { consumeMemoEvents, openEvent, settleEach, Slots } from './events/consumer';
export type { BatchResults, ConsumeMemoEventsOptions, EventContext } from './events/consumer';

export { pingService, serveHealth } from './health/health';
export { startHealthServer } from './health/httpHealth';
export { readinessProbe } from './health/readiness';
export type { HealthReport } from './health/health';
export type { Readiness } from './health/readiness';

export {
  API_KEY_PREFIX,
  DEFAULT_ORGANIZATION_ID,
  DEFAULT_ORGANIZATION_NAME,
  Directory,
  DirectoryError,
  ORG_TOKEN_PREFIX,
  hashSecret,
  keyIdOf,
} from './directory/directory';
export type { ApiKeyRecord, KeyListing, OrgTokenRecord, OrganizationRecord, ProjectRecord } from './directory/directory';
export { DirectoryCache } from './directory/cache';
export type { Principal } from './directory/cache';
export { ChatOwners, chatListItem } from './directory/chatOwners';
export type { ChatCaller } from './directory/chatOwners';
export { ACCESS_TOKEN_PREFIX, signToken, verifyToken } from './directory/tokens';
export type { TokenClaims } from './directory/tokens';

export { MEMEX_NAMESPACE, chunkId, derivedIdsHeld, forgetDerivedIds, tagId, uuidFromBytes, uuidToBytes, uuidV5, uuidV7 } from './ids/ids';

export { IndexStateStore, REINDEX_OWNER_TIMEOUT_MS, reindexOwnerSilent } from './indexState/indexState';
export { IdempotencyStore, requestHash } from './idempotency/idempotency';
export type { IndexState } from './indexState/indexState';

export { failpoints } from './failpoints';
export type { Failpoints } from './failpoints';

export { TokenStreamReader, TokenStreamWriter } from './streams/tokenStream';
export type { TokenStreamOptions } from './streams/tokenStream';

export { Counter, Gauge, Histogram, LATENCY_BUCKETS, Metrics, renderPrometheus } from './metrics/registry';
export type { Labels, MetricFamily } from './metrics/registry';
export { collectMetrics, serveMetrics } from './metrics/serve';
export { TURN_BUDGET_MS, mapInTurns, nextTurn, runInTurns } from './turns';
export { EVENT_LOOP_DELAY_BUCKETS, EVENT_LOOP_SAMPLE_MS, watchEventLoop } from './metrics/eventLoop';
export type { InstanceMetrics } from './metrics/serve';

export { BlobIntegrityError, collect, verifyBlob } from './blobs/port';
export type { BlobSource, BlobStore } from './blobs/port';
export { NatsBlobStore } from './blobs/nats';
export { GridFsBlobStore } from './blobs/gridfs';
export { MONGO_CLIENT_OPTIONS, connectMongo, isDuplicateKeyError, isMongoServerError, mongoDriver } from './mongo/driver';
export { KeyErasedError, Keyring, SEAL_FOR_TRANSIT, SealBrokenError, isKeyErased, type SealOptions } from './keyring/keyring';
export type { KeyringOptions } from './keyring/keyring';
export { ContentStore, openBlobStore } from './blobs/content';

export {
  activeTraceMeta,
  extractTrace,
  extractTraceFrom,
  failSpan,
  inSpan,
  injectTrace,
  messagingAttributes,
  SpanKind,
  startSpan,
  tracingOn,
  withSpan,
} from './tracing/context';
export type { Context as TraceContext, Span, SpanOptions, TraceMeta } from './tracing/context';
export { nameHttpSpan, traceHttpRequests } from './tracing/http';
export { traceMethods, type MethodSpan } from './tracing/methods';
export { startTracing } from './tracing/tracing';
export type { Tracing } from './tracing/tracing';
export { tracingSettings, TracingConfigError } from './tracing/settings';
export type { TracingSettings } from './tracing/settings';
export { WebhookStore } from './webhooks/store';
export { newWebhookSecret, signWebhook, signatureMatches, webhookHeaders } from './webhooks/signature';
export { RefusedAddressError, isRefusedAddress, resolveWebhookHost } from './webhooks/address';
export { openFeedEvent, sealFeedEvent } from './webhooks/feed';
export { FEED_SPACE_KEY_ID, FeedSpaces, decidableByDigests, feedSpaceCheck, feedSpaceOf, type FeedSpaceCheck } from './webhooks/feedSpace';
export { openWebhookSecret, sealWebhookSecret, shredWebhookSecret } from './webhooks/secret';
