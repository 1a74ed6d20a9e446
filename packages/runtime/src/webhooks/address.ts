import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless private targets are allowed: loopback, private,
 * carrier-grade NAT, link-local (cloud metadata at 169.254.169.254 included), unique-local,
 * multicast, reserved and unspecified ranges, v4-mapped and NAT64 forms of them too.
 */
const REFUSED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) REFUSED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) REFUSED.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 one embeds (v4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`), if any. */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(lower);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = Number.parseInt(m[2]!, 16);
  const lo = Number.parseInt(m[3]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether a literal IP address is in a range webhooks may not reach. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return REFUSED.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4) return REFUSED.check(v4, 'ipv4');
    return REFUSED.check(address, 'ipv6');
  }
  return true;
}

export class RefusedAddressError extends Error {
  constructor(readonly host: string, readonly address: string) {
    super(`${host} resolves to ${address}, which webhooks may not reach`);
    this.name = 'RefusedAddressError';
  }
}

/**
 * Resolves a webhook host and checks every address it has; resolves to the addresses (the one to
 * connect to first), or throws `RefusedAddressError`. `allowPrivate` skips the range check.
 */
export async function resolveWebhookHost(host: string, allowPrivate: boolean): Promise<{ address: string; family: number }[]> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await lookup(bare, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate) for (const { address } of addresses) if (isRefusedAddress(address)) throw new RefusedAddressError(host, address);
  return addresses;
}
