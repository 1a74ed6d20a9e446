import { readFileSync } from 'node:fs';
import { credsAuthenticator, errors, tokenAuthenticator, usernamePasswordAuthenticator } from '@nats-io/nats-core';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ConfigError } from '../configError';
import type { Logger } from '../logger';
import { coalesceWrites } from './writeCoalescing';

/** How to authenticate to NATS and verify it; from NATS_CREDS, NATS_USER/PASSWORD, NATS_TOKEN, NATS_TLS_*. */
export interface NatsAuth {
  NATS_CREDS?: string | undefined;
  NATS_USER?: string | undefined;
  NATS_PASSWORD?: string | undefined;
  NATS_TOKEN?: string | undefined;
  NATS_TLS_CA?: string | undefined;
  NATS_TLS_CERT?: string | undefined;
  NATS_TLS_KEY?: string | undefined;
}

function authOptions(auth: NatsAuth | undefined) {
  if (!auth) return {};
  const authenticator = auth.NATS_CREDS
    ? credsAuthenticator(new Uint8Array(readFileSync(auth.NATS_CREDS)))
    : auth.NATS_USER
      ? usernamePasswordAuthenticator(auth.NATS_USER, auth.NATS_PASSWORD ?? '')
      : auth.NATS_TOKEN
        ? tokenAuthenticator(auth.NATS_TOKEN)
        : undefined;
  const tls =
    auth.NATS_TLS_CA || auth.NATS_TLS_CERT
      ? {
          ...(auth.NATS_TLS_CA ? { caFile: auth.NATS_TLS_CA } : {}),
          ...(auth.NATS_TLS_CERT ? { certFile: auth.NATS_TLS_CERT } : {}),
          ...(auth.NATS_TLS_KEY ? { keyFile: auth.NATS_TLS_KEY } : {}),
        }
      : undefined;
  return { ...(authenticator ? { authenticator } : {}), ...(tls ? { tls } : {}) };
}

export interface ConnectOptions {
  url: string;
  /** Shown in the server's connection list: `memex-<service>-<instance>`. */
  name: string;
  logger?: Logger;
  /** Give up the first connection after this long (reconnects after that never give up). */
  timeoutMs?: number;
  auth?: NatsAuth;
  /** NATS_WRITE_DELAY_MS: how long sent messages may wait to be written together (see coalesceWrites); 0: as nats.js writes. */
  writeDelayMs?: number;
  /**
   * Keep trying the first connection while no server answers (services: NATS may come up after
   * them, or be restarting), saying so in the log; without it the first failure rejects (the CLI).
   * Refused credentials reject either way.
   */
  waitForServer?: boolean;
}

/** Whether each connection made by `connectNats` is up right now (false from its disconnect to its reconnect). */
const linkUp = new WeakMap<NatsConnection, boolean>();

/**
 * Whether `nc` can reach its server now. A dead local server is seen at once (the socket closes); a
 * silent network loss within two missed pings (`PING_INTERVAL_MS`). Connections not made by
 * `connectNats` count as up until closed.
 */
export function natsConnected(nc: NatsConnection): boolean {
  return !nc.isClosed() && linkUp.get(nc) !== false;
}

/**
 * Resolves once the server has every subscription made on `nc` so far. `subscribe` only queues the
 * SUB: a service that reports ready before this could get a request, sent at once from another
 * connection, that reaches the server first and finds no responder.
 */
export async function subscriptionsServed(nc: NatsConnection): Promise<void> {
  await nc.flush();
}

/** NATS_WRITE_DELAY_MS's default. */
export const DEFAULT_NATS_WRITE_DELAY_MS = 1;

/** How often the client pings the server; two unanswered pings count as a lost connection. */
export const PING_INTERVAL_MS = 5_000;

/**
 * Connects with the settings every Memex process wants: no async stack traces (they cost two Error
 * objects per request), endless reconnects, status logging, the
 * link state `natsConnected` reports, and messages sent in one turn of the event loop written
 * together (`coalesceWrites`).
 */
export async function connectNats({ url, name, logger, timeoutMs = 5_000, auth, writeDelayMs = DEFAULT_NATS_WRITE_DELAY_MS, waitForServer = false }: ConnectOptions): Promise<NatsConnection> {
  const options = {
    ...authOptions(auth),
    servers: url.split(',').map((s) => s.trim()),
    name,
    noAsyncTraces: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: timeoutMs,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: 2,
  };
  const nc = await firstConnection(() => connect(options), { url, logger, waitForServer });
  linkUp.set(nc, true);
  if (writeDelayMs > 0 && !coalesceWrites(nc, writeDelayMs)) {
    logger?.warn('NATS writes not coalesced: this nats.js has other internals than the ones known (writes as nats.js does)');
  }
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'staleConnection') linkUp.set(nc, false);
      else if (status.type === 'reconnect') linkUp.set(nc, true);
      if (!logger || status.type === 'ping' || status.type === 'staleConnection') continue;
      logger.info({ nats: status.type, server: 'server' in status ? status.server : undefined }, 'nats status');
    }
  })();
  return nc;
}

/** How long a service waiting for its first connection waits between tries, and between its log lines saying it still waits. */
const FIRST_CONNECT_RETRY_MS = 1_000;
const STILL_WAITING_LOG_MS = 30_000;

/** Why no server could be reached, when trying again can help: refused, timed out, its name not (yet) in DNS. */
function unreachable(error: unknown): string | undefined {
  if (error instanceof errors.ConnectionError || error instanceof errors.TimeoutError) return error.message;
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return (error as Error).message;
  return undefined;
}

async function firstConnection(
  dial: () => Promise<NatsConnection>,
  { url, logger, waitForServer }: { url: string; logger: Logger | undefined; waitForServer: boolean },
): Promise<NatsConnection> {
  const started = Date.now();
  let loggedAt: number | undefined;
  for (;;) {
    try {
      const nc = await dial();
      if (loggedAt !== undefined) logger?.info({ nats: url, waitedMs: Date.now() - started }, 'NATS reached');
      return nc;
    } catch (error) {
      if (error instanceof errors.AuthorizationError || error instanceof errors.UserAuthenticationExpiredError) {
        throw new ConfigError(`NATS at ${url} refused the credentials (${error.message}): check NATS_CREDS, NATS_USER and NATS_PASSWORD, or NATS_TOKEN`, { cause: error });
      }
      const reason = unreachable(error);
      if (!waitForServer || reason === undefined) throw error;
      if (loggedAt === undefined) {
        logger?.warn({ nats: url, error: reason }, `NATS not reachable; trying again every ${FIRST_CONNECT_RETRY_MS / 1000} s`);
        loggedAt = Date.now();
      } else if (Date.now() - loggedAt >= STILL_WAITING_LOG_MS) {
        logger?.warn({ nats: url, error: reason, waitedS: Math.round((Date.now() - started) / 1000) }, 'still waiting for NATS');
        loggedAt = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, FIRST_CONNECT_RETRY_MS));
    }
  }
}
