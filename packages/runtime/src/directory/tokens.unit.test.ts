import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signToken, tokenClaims, verifyToken, type TokenClaims } from './tokens';

const secret = randomBytes(32).toString('base64url');
const claims: TokenClaims = { p: 'p1', k: 'abcd', s: ['search'], f: [{ field: 'user_id', operator: 'eq', value: 'u1', filter_type: 'custom_metadata' }], e: 2_000, sub: 'u1' };

describe('access tokens', () => {
  it('verify with the secret that signed them, until they expire', () => {
    const token = signToken(secret, claims);
    expect(token).toMatch(/^mxt_[\w-]+\.[\w-]+$/);
    expect(verifyToken(token, secret, 1_999)).toEqual(claims);
    expect(verifyToken(token, secret, 2_000)).toBeUndefined();
    expect(verifyToken(token, randomBytes(32).toString('base64url'), 1_000)).toBeUndefined();
  });

  it('refuse changed claims and changed signatures', () => {
    const token = signToken(secret, claims);
    const [payload, mac] = token.slice(4).split('.') as [string, string];
    const widened = Buffer.from(JSON.stringify({ ...claims, f: [] })).toString('base64url');
    expect(tokenClaims(`mxt_${widened}.${mac}`)?.f).toEqual([]);
    expect(verifyToken(`mxt_${widened}.${mac}`, secret, 1_000)).toBeUndefined();
    expect(verifyToken(`mxt_${payload}.${mac.slice(0, -1)}`, secret, 1_000)).toBeUndefined();
    expect(verifyToken(`mxt_${payload}`, secret, 1_000)).toBeUndefined();
    expect(verifyToken('mxt_%%%.abc', secret, 1_000)).toBeUndefined();
  });
});
