import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the Standard Webhooks form). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/**
 * The Standard Webhooks signature of one delivery: `v1,` + base64 HMAC-SHA256, keyed with the
 * secret's decoded bytes, over `{id}.{timestamp}.{body}`.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers a delivery carries. */
export function webhookHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, id, timestamp, body) };
}

/** Whether any `v1,` signature of a space-separated header value matches (constant time per candidate). */
export function signatureMatches(secret: string, id: string, timestamp: number, body: string, header: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
