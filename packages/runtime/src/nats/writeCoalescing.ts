import type { NatsConnection } from '@nats-io/nats-core';

/**
 * The parts of nats.js's connection internals (`@nats-io/nats-core` 3.x, `ProtocolHandler`) that
 * decide when queued protocol lines reach the socket. Checked at run time: a version without them
 * keeps its own scheduling (see {@link coalesceWrites}).
 */
interface Protocol {
  outbound: { length(): number; size(): number; fill(buffer: Uint8Array, ...payloads: Uint8Array[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(command: string | Uint8Array, ...payloads: Uint8Array[]): void;
}

function protocolOf(nc: NatsConnection): Protocol | undefined {
  const protocol = (nc as unknown as { protocol?: Partial<Protocol> }).protocol;
  const outbound = protocol?.outbound;
  if (
    !protocol ||
    typeof protocol.sendCommand !== 'function' ||
    typeof protocol.flushPending !== 'function' ||
    typeof protocol.pendingLimit !== 'number' ||
    typeof outbound?.fill !== 'function' ||
    typeof outbound.length !== 'function' ||
    typeof outbound.size !== 'function'
  ) {
    return undefined;
  }
  return protocol as Protocol;
}

/**
 * Writes what `nc` sends to its server together: once per turn of the event loop (a `setImmediate`
 * after the first message queued), or at once when a message is sent `maxDelayMs` or more after
 * the oldest one still queued, or when the queue passes nats.js's own limit. nats.js writes at the
 * end of the microtask checkpoint of the first queued message, so a process answering many
 * messages in one turn (each reply, acknowledgement and publish in its own promise chain) makes a
 * socket write per message, and the server a read per write; written together, both sides spend
 * far fewer system calls under load (figures in docs/benchmarks.md). Order is unchanged: one
 * queue, written in order.
 *
 * An idle process writes a message within the same turn it was sent in, so latency changes only
 * under load, by at most the time between two of its sends plus `maxDelayMs`, or the rest of a long
 * turn that sends nothing more. Returns false, leaving nats.js's scheduling, when its internals are
 * not the ones known here (a nats.js upgrade); `maxDelayMs` 0 also leaves it.
 */
export function coalesceWrites(nc: NatsConnection, maxDelayMs: number): boolean {
  if (maxDelayMs <= 0) return false;
  const protocol = protocolOf(nc);
  if (!protocol) return false;
  const encoder = new TextEncoder();
  let scheduled = false;
  let oldestQueuedAt = 0;
  const flushAtTurnEnd = () => {
    scheduled = false;
    protocol.flushPending();
  };
  protocol.sendCommand = (command, ...payloads) => {
    const { outbound } = protocol;
    const wasEmpty = outbound.length() === 0;
    outbound.fill(typeof command === 'string' ? encoder.encode(command) : command, ...payloads);
    if (wasEmpty) {
      oldestQueuedAt = performance.now();
      if (!scheduled) {
        scheduled = true;
        setImmediate(flushAtTurnEnd);
      }
    } else if (outbound.size() >= protocol.pendingLimit || performance.now() - oldestQueuedAt >= maxDelayMs) {
      protocol.flushPending();
    }
  };
  return true;
}
