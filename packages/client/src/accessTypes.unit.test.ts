/**
 * The SDK's access types (written out in types.ts so the SDK has no dependency on the server's
 * contracts) against the contracts' schema types, type for type: `pnpm typecheck` fails on any
 * difference, a scope added or a field's type changed included. operations.unit.test.ts checks
 * the field names against the OpenAPI document; this checks what each field holds.
 */
import type * as contracts from '@memex/contracts';
import { describe, expect, it } from 'vitest';
import type * as sdk from './types';

/** true when each type is assignable to the other (the same shape, whatever spelled it). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const SAME = {
  Scope: true satisfies Same<sdk.Scope, contracts.Scope>,
  Filter: true satisfies Same<sdk.Filter, contracts.Filter>,
  CreateKeyBody: true satisfies Same<sdk.CreateKeyBody, contracts.CreateKeyBody>,
  KeyInfo: true satisfies Same<sdk.KeyInfo, contracts.KeyInfo>,
  CreatedKey: true satisfies Same<sdk.CreatedKey, contracts.CreatedKey>,
  KeyListResponse: true satisfies Same<sdk.KeyListResponse, contracts.KeyListResponse>,
  CreateTokenBody: true satisfies Same<sdk.CreateTokenBody, contracts.CreateTokenBody>,
  CreatedToken: true satisfies Same<sdk.CreatedToken, contracts.CreatedToken>,
  AuditEntry: true satisfies Same<sdk.AuditEntry, contracts.AuditEntry>,
  AuditResponse: true satisfies Same<sdk.AuditResponse, contracts.AuditResponse>,
};

describe('the SDK’s access types', () => {
  it('are the contracts’ types (checked by the compiler; listed here so none is dropped unseen)', () => {
    expect(Object.keys(SAME).sort()).toEqual(['AuditEntry', 'AuditResponse', 'CreateKeyBody', 'CreateTokenBody', 'CreatedKey', 'CreatedToken', 'Filter', 'KeyInfo', 'KeyListResponse', 'Scope']);
  });
});
