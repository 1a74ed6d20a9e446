import type { NatsConnection } from '@nats-io/nats-core';

/** Room kept for headers (request ids, stream sequence numbers) inside NATS `max_payload`. */
export const HEADER_ALLOWANCE_BYTES = 4 * 1024;

/**
 * The largest body a message may have on this connection: the server's `max_payload` less room for
 * headers. Before the server has said (not connected yet), NATS' default of 1 MiB.
 */
export function payloadBudget(nc: NatsConnection): number {
  const max = nc.info?.max_payload ?? 1024 * 1024;
  return max - HEADER_ALLOWANCE_BYTES;
}

export function fitsPayload(nc: NatsConnection, data: Uint8Array): boolean {
  return data.byteLength <= payloadBudget(nc);
}
