import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Filter, Scope } from '@memex/contracts';

export const ACCESS_TOKEN_PREFIX = 'mxt_';

/** What a token asserts; signed, so any gateway verifies it without a lookup. */
export interface TokenClaims {
  /** Project id. */
  p: string;
  /** The id of the key that minted it: the token dies with that key. */
  k: string;
  s: Scope[];
  f: Filter[];
  /** Expiry, epoch milliseconds. */
  e: number;
  sub?: string;
}

function mac(secret: string, payload: string): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'base64url')).update(payload).digest();
}

/** `mxt_<claims, base64url JSON>.<HMAC-SHA256 of them with the project's token secret>`. */
export function signToken(secret: string, claims: TokenClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${ACCESS_TOKEN_PREFIX}${payload}.${mac(secret, payload).toString('base64url')}`;
}

/** The project a token claims to be of, before its signature is checked (to find the secret). */
export function tokenClaims(token: string): TokenClaims | undefined {
  if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
  const dot = token.indexOf('.', ACCESS_TOKEN_PREFIX.length);
  if (dot < 0) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(token.slice(ACCESS_TOKEN_PREFIX.length, dot), 'base64url').toString('utf8')) as TokenClaims;
    if (typeof claims?.p !== 'string' || typeof claims.k !== 'string' || !Array.isArray(claims.s) || !Array.isArray(claims.f) || typeof claims.e !== 'number') return undefined;
    return claims;
  } catch {
    return undefined;
  }
}

/** The claims of a token signed with `secret` that has not expired at `now`; undefined otherwise. */
export function verifyToken(token: string, secret: string, now = Date.now()): TokenClaims | undefined {
  const claims = tokenClaims(token);
  if (!claims) return undefined;
  const dot = token.indexOf('.', ACCESS_TOKEN_PREFIX.length);
  const payload = token.slice(ACCESS_TOKEN_PREFIX.length, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return claims.e > now ? claims : undefined;
}
