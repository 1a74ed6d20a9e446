/**
 * Checks a webhook delivery the Standard Webhooks way: `webhook-signature` holds `v1,<base64>`
 * entries, the HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the secret's
 * base64-decoded bytes (after `whsec_`). Web Crypto only, so it runs in Node ≥ 20, browsers and
 * edge runtimes. `body` must be the raw request body, byte for byte as received.
 */
export async function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string,
  options: { toleranceS?: number; now?: number } = {},
): Promise<boolean> {
  const get = (name: string): string | undefined => {
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
    const record = headers as Record<string, string | string[] | undefined>;
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    const value = key === undefined ? undefined : record[key];
    return Array.isArray(value) ? value.join(' ') : value;
  };
  const id = get('webhook-id');
  const timestamp = get('webhook-timestamp');
  const signature = get('webhook-signature');
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  const nowS = (options.now ?? Date.now()) / 1000;
  if (Math.abs(nowS - Number(timestamp)) > (options.toleranceS ?? 300)) return false;
  const keyBytes = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) continue;
    let given: Uint8Array<ArrayBuffer>;
    try {
      given = base64Bytes(value);
    } catch {
      continue;
    }
    // verify() compares in constant time.
    if (await crypto.subtle.verify('HMAC', key, given, signed)) return true;
  }
  return false;
}

function base64Bytes(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
