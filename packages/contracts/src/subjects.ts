/**
 * Every NATS name Memex uses: subjects, streams, durable consumers, KV buckets and headers.
 * Nothing outside this module spells one.
 */

const ROOT = 'memex';

/** A NATS subject token must not contain `.`, `*`, `>` or whitespace. */
export function isSubjectToken(value: string): boolean {
  return value.length > 0 && !/[\s.*>]/.test(value);
}

function token(value: string, what: string): string {
  if (!isSubjectToken(value)) throw new Error(`${what} is not a valid subject token: ${JSON.stringify(value)}`);
  return value;
}

export const Streams = {
  /** Commands to the memo service: a work queue, each command taken by one memo instance once. */
  memoCommands: 'MEMO_COMMANDS',
  /**
   * Memo events on their way to the consumers, one subject per memo (interest retention: a message
   * goes once every durable consumer has acknowledged it). The memo service's event store keeps the
   * log; replays read it there (`Subjects.query.memoLog`).
   */
  memoEvents: 'MEMO_EVENTS',
  /** Messages a consumer gave up on after its redelivery budget. */
  deadLetters: 'DEAD_LETTERS',
  /** Who touched what: one message per authenticated call, written by the gateway, kept MEMEX_AUDIT_RETENTION. */
  audit: 'AUDIT',
  /**
   * The public event feed: versioned public events projected from the memo events, no content,
   * one subject per project and type (`Subjects.feed`), kept for `MEMEX_EVENTS_RETENTION`.
   */
  feed: 'MEMEX_FEED',
  /** Webhook delivery attempts, one subject per webhook, the latest few kept for its deliveries listing. */
  webhookDeliveries: 'WEBHOOK_DELIVERIES',
} as const;

export const Consumers = {
  /** The memo service's command handlers. */
  memoCommands: 'memo',
  /** Chunks and embeds memo content (slow work). */
  indexer: 'indexer',
  /** Keeps the indexer's memo catalog (attributes filters read, revisions, deletions) current (fast). */
  indexerCatalog: 'indexer-catalog',
  /** Summaries and tags. */
  agent: 'agent',
  /** Turns uploaded files into content revisions (and erases them with their memo). */
  extractor: 'extractor',
  /** Projects memo events into the public feed (`Streams.feed`). */
  feed: 'feed',
} as const;
export type ConsumerName = (typeof Consumers)[keyof typeof Consumers];

export const Subjects = {
  memoCommandsAll: `${ROOT}.cmd.memo.>`,
  memoCommand: (name: MemoCommandName) => `${ROOT}.cmd.memo.${token(name, 'command')}`,
  /** The command name a memo command subject carries (its last token). */
  memoCommandName: (subject: string) => subject.slice(`${ROOT}.cmd.memo.`.length) as MemoCommandName,

  memoEventsAll: `${ROOT}.evt.memo.>`,
  /** One subject per memo; DELETE purges it down to the tombstone. */
  memoEvents: (projectId: string, memoId: string) =>
    `${ROOT}.evt.memo.${token(projectId, 'project id')}.${token(memoId, 'memo id')}`,

  auditAll: `${ROOT}.audit.>`,
  /** One subject per project, so a project's trail is read without the others'. */
  audit: (projectId: string) => `${ROOT}.audit.${token(projectId, 'project id')}`,

  deadLettersAll: `${ROOT}.dlq.>`,
  /** A dead letter keeps its original subject as a suffix, so erasing a memo can purge its copies too. */
  deadLetter: (consumer: ConsumerName, originalSubject: string) => `${ROOT}.dlq.${token(consumer, 'consumer')}.${originalSubject}`,
  deadLettersOfMemo: (projectId: string, memoId: string) =>
    `${ROOT}.dlq.*.${ROOT}.evt.memo.${token(projectId, 'project id')}.${token(memoId, 'memo id')}`,

  feedAll: `${ROOT}.feed.>`,
  /**
   * A public event: project, then the versioned type (`memo.processed` is two tokens), so one filter
   * picks a project or a project's type. Few subjects on purpose: nats-server's cost of starting a
   * filtered read grows with the number of distinct subjects it covers.
   */
  feed: (projectId: string, type: string) =>
    `${ROOT}.feed.v1.${token(projectId, 'project id')}.${type.split('.').map((t) => token(t, 'event type')).join('.')}`,
  /** Every public event of one project. */
  feedOfProject: (projectId: string) => `${ROOT}.feed.v1.${token(projectId, 'project id')}.>`,
  webhookDeliveriesAll: `${ROOT}.webhook.delivery.>`,
  webhookDeliveries: (webhookId: string) => `${ROOT}.webhook.delivery.${token(webhookId, 'webhook id')}`,

  /** Core NATS request/reply, served in queue groups named after the service. */
  query: {
    memoGet: `${ROOT}.q.memo.get`,
    /** A route's memo address (uuid or reference id) → the memo's uuid and owner. */
    memoResolve: `${ROOT}.q.memo.resolve`,
    memoTitleSearch: `${ROOT}.q.memo.title-search`,
    memoList: `${ROOT}.q.memo.list`,
    memoStatus: `${ROOT}.q.memo.status`,
    memoHistory: `${ROOT}.q.memo.history`,
    /** Where a memo's original file is (its `MemoFile`), for the download route. */
    memoFile: `${ROOT}.q.memo.file`,
    /** The memo event log in pages, for replays (re-indexing): the bus only carries events in flight. */
    memoLog: `${ROOT}.q.memo.log`,
    indexSearch: `${ROOT}.q.index.search`,
    indexStatus: `${ROOT}.q.index.status`,
    agentChat: `${ROOT}.q.agent.chat`,
    agentGenerate: `${ROOT}.q.agent.generate`,
    agentChatList: `${ROOT}.q.agent.chat-list`,
    agentChatGet: `${ROOT}.q.agent.chat-get`,
  },

  /** Liveness ping answered by every instance of a service (queue group per service). */
  health: (service: ServiceName) => `${ROOT}.health.${token(service, 'service')}`,
  /** Admin broadcast to every instance of a service (no queue group), e.g. reindex progress. */
  control: (service: ServiceName) => `${ROOT}.control.${token(service, 'service')}`,

  /**
   * Token streams: the agent publishes numbered messages on `data`; the gateway sends credit and
   * cancellation on `ctl`. One pair per request id.
   */
  tokenStream: (streamId: string) => `${ROOT}.stream.${token(streamId, 'stream id')}.data`,
  tokenStreamControl: (streamId: string) => `${ROOT}.stream.${token(streamId, 'stream id')}.ctl`,

  /** Gateways share per-project request counts here so a rate limit holds across instances. */
  rateLimitSync: `${ROOT}.gateway.rate-limit`,
  /** Gateway instances share their counts of failed authentications per client address. */
  authFailureSync: `${ROOT}.gateway.auth-failures`,
} as const;

export const QueueGroups = {
  memo: 'memo',
  indexer: 'indexer',
  agent: 'agent',
  gateway: 'gateway',
  extractor: 'extractor',
} as const;

export type ServiceName = 'gateway' | 'memo' | 'indexer' | 'agent' | 'extractor';
export const SERVICE_NAMES: readonly ServiceName[] = ['gateway', 'memo', 'indexer', 'agent', 'extractor'];

export type MemoCommandName =
  | 'create'
  | 'create-batch'
  | 'update'
  | 'delete'
  | 'record-chunks'
  | 'record-summary'
  | 'record-processing-failure'
  | 'record-extraction';

export const Buckets = {
  /** sha256(api key) → ApiKeyRecord. */
  apiKeys: 'memex_api_keys',
  /** sha256(org token) → OrgTokenRecord. */
  orgTokens: 'memex_org_tokens',
  /** project id → ProjectRecord. */
  projects: 'memex_projects',
  /** organization id → OrganizationRecord. */
  organizations: 'memex_organizations',
  /** Which embedding model the index serves, and any re-index in progress. */
  indexState: 'memex_index_state',
  /** `<memo id an Idempotency-Key maps to>` → sha256 of the first request body (entries expire). */
  idempotency: 'memex_idempotency',
  /**
   * memo → its 256-bit data key (history 1). Kept outside the event log: removing a key
   * crypto-shreds every sealed copy of the memo (events, bus messages, blobs, backups).
   */
  memoKeys: 'memex_memo_keys',
  /** key id → when a gateway last saw the key used (written at most once a minute per key). */
  keyUsage: 'memex_key_usage',
  /** `<project id>.<chat id>` → the scoped key (and token subject) that started the chat. */
  chatOwners: 'memex_chat_owners',
  /** `<project id>.<webhook id>` → WebhookRecord (its signing secret included, never answered after creation). */
  webhooks: 'memex_webhooks',
} as const;

/** Durable consumers made at run time, one per webhook, on the feed filtered by the webhook's project. */
export const WebhookConsumers = {
  durable: (webhookId: string) => `webhook-${token(webhookId, 'webhook id')}`,
  /** The webhook id a durable's name carries, or undefined for another consumer. */
  webhookId: (durable: string) => (durable.startsWith('webhook-') ? durable.slice('webhook-'.length) : undefined),
} as const;

/** JetStream Object Store buckets (the embedded blob store). */
export const ObjectBuckets = {
  /** Memo content revisions and uploaded files, sealed with the memo's key. */
  blobs: 'memex_blobs',
} as const;

/**
 * Our headers, and the JetStream ones we set or read by hand (the `Nats-` prefix, and KV's marker).
 */
export const Headers = {
  /** JetStream stores a message id once within the stream's duplicate window. */
  msgId: 'Nats-Msg-Id',
  /** JetStream stores the publish only if its subject's last message has this sequence (0: none yet). */
  expectedLastSubjectSequence: 'Nats-Expected-Last-Subject-Sequence',
  /** A KV marker message's operation, DEL or PURGE (a value has none). */
  kvOperation: 'KV-Operation',
  requestId: 'Memex-Request-Id',
  /** W3C trace context (https://www.w3.org/TR/trace-context/), beside the request id on every message when tracing is on. */
  traceparent: 'traceparent',
  tracestate: 'tracestate',
  correlationId: 'Memex-Correlation-Id',
  /** Epoch milliseconds after which the caller no longer waits: the command is dropped, not run late. */
  deadline: 'Memex-Deadline',
  /** Where the command handler sends its result (JetStream does not keep a publisher's reply subject). */
  replyTo: 'Memex-Reply-To',
  eventType: 'Memex-Event-Type',
  /** The memo's stream version of an event, for ordering checks by consumers. */
  eventVersion: 'Memex-Event-Version',
  /** `raw`: the memo event's sealed box follows its JSON as bytes, not base64 (see decodeMemoEvent). */
  sealedBox: 'Memex-Sealed-Box',
  /** Sequence number of a token-stream message, from 1. */
  streamSeq: 'Memex-Stream-Seq',
} as const;
