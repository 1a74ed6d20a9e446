import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Consumers, MemexError, Streams, type Filter } from '@memex/contracts';
import { waitForConsumer, type CommandClient, type ContentStore, type Logger, type Metrics } from '@memex/runtime';
import type { AuditTrail } from '../auth/audit';
import { authenticate, projectFor, type Credentials } from '../auth/authenticate';
import { checkAccess, type Caller } from '../auth/scopes';
import type { GatewayConfig } from '../config';
import type { RateLimiter } from '../rateLimit/limiter';

export interface GatewayDeps {
  config: GatewayConfig;
  nc: NatsConnection;
  jsm: JetStreamManager;
  commands: CommandClient;
  /** Memo content: sealed blobs (claim-check) and the memo keys. */
  content: ContentStore;
  credentials: Credentials;
  limiter: RateLimiter;
  /** Failed authentications per client address; the app makes one from the config if absent. */
  authFailures?: RateLimiter;
  logger: Logger;
  metrics: Metrics;
  /** This gateway instance's id, as its metrics are labelled. */
  instance: string;
  /** Where authenticated calls are recorded; the app opens one from the config if absent. */
  audit?: AuditTrail;
}

interface RequestContext {
  projectId: string;
  requestId: string;
  /** Who calls, with what scopes. */
  caller: Caller;
  /** The caller's knowledge space, to be ANDed into every retrieval and lookup (empty: the project). */
  space: Filter[];
}

/** Reads a `project_id` a request names (body for POSTs, query string otherwise) without validating the rest. */
export function requestedProject(source: unknown): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const value = (source as Record<string, unknown>).project_id;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new MemexError('InvalidRequest', 'project_id must be a UUID');
  return value;
}

/**
 * Authenticates, picks the project and takes `cost` units of its rate limit (one per request, one
 * per memo of a batch), in that order, setting the RateLimit headers. Every API route starts here.
 */
export function requestContext(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, requested?: string, cost = 1): RequestContext {
  const principal = authenticateLimited(deps, request, reply);
  const projectId = projectFor(deps.credentials, principal, requested);
  // The route's scope is checked here, for every API route, before any work.
  const caller = checkAccess(request, principal, projectId);
  if (deps.limiter.enabled) {
    // A 429 would be a promise no wait keeps: say what size goes through (clients split on 413).
    if (cost > deps.limiter.limit) throw new MemexError('BatchOverRateLimit', `send at most ${deps.limiter.limit} memos per batch`);
    const decision = deps.limiter.take(projectId, cost);
    const resetS = Math.ceil(decision.resetMs / 1000);
    reply.header('RateLimit-Limit', decision.limit);
    reply.header('RateLimit-Remaining', decision.remaining);
    reply.header('RateLimit-Reset', resetS);
    if (!decision.allowed) {
      reply.header('Retry-After', resetS);
      throw new MemexError('RateLimited');
    }
  }
  return { projectId, requestId: request.id, caller, space: [...caller.space] };
}

/**
 * Authenticates unless the client address has failed too often lately. An address over the limit gets
 * 429 for every request, a valid key included (otherwise a guessed key would stand out from the 429s),
 * until its failures age out; other addresses are not affected.
 */
function authenticateLimited(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply) {
  const failures = deps.authFailures;
  if (!failures?.enabled) return authenticate(deps.credentials, request);
  const address = request.ip;
  const refuse = (resetMs: number): never => {
    reply.header('Retry-After', Math.ceil(resetMs / 1000));
    throw new MemexError('TooManyFailedAuthentications');
  };
  const state = failures.peek(address);
  if (!state.allowed) refuse(state.resetMs);
  try {
    return authenticate(deps.credentials, request);
  } catch (error) {
    if (error instanceof MemexError && (error.code === 'MissingApiKey' || error.code === 'InvalidApiKey')) {
      const decision = failures.take(address);
      if (!decision.allowed) refuse(decision.resetMs);
    }
    throw error;
  }
}

/**
 * Read-your-writes for search: waits until the indexer's catalog has applied the write's events, so
 * a search right after PATCH or DELETE reflects it. Skipped when no indexer is consuming (nothing to
 * wait for), bounded by MEMEX_CONSISTENCY_TIMEOUT_MS.
 */
export async function awaitSearchConsistency(deps: GatewayDeps, eventSeq: number | undefined): Promise<void> {
  const timeoutMs = deps.config.MEMEX_CONSISTENCY_TIMEOUT_MS;
  if (eventSeq === undefined || timeoutMs === 0) return;
  try {
    const info = await deps.jsm.consumers.info(Streams.memoEvents, Consumers.indexerCatalog);
    if (info.num_waiting === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq < eventSeq) return;
    const caughtUp = await waitForConsumer(deps.jsm, Consumers.indexerCatalog, eventSeq, { timeoutMs });
    if (!caughtUp) deps.logger.warn({ eventSeq }, 'search catalog did not catch up in time; answering anyway');
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not check search consistency');
  }
}
