import type { FastifyRequest } from 'fastify';
import { MemexError, SCOPES, type Filter, type Scope } from '@memex/contracts';
import type { Principal } from '@memex/runtime';

/**
 * What a route needs, declared on the route (`config: { access: { scope, action } }`) and checked
 * in one place (`checkAccess`, run by `requestContext` on every API route). `any`: every
 * authenticated caller; `owner`: owner keys and organization tokens only.
 */
export interface RouteAccess {
  scope: Scope | 'any' | 'owner';
  /** The audit trail's name for the call: memo.read, search, keys.create, … */
  action: string;
}

/** The principal a request acts as, resolved once per request. */
export interface Caller {
  projectId: string;
  /** The key used (or that minted the token used); null for an organization token. */
  keyId: string | null;
  /** A token's subject; null for keys. */
  subject: string | null;
  owner: boolean;
  scopes: readonly Scope[];
  space: readonly Filter[];
  /** Epoch ms when the key or token stops working; null: never. */
  expiresAt: number | null;
}

/** What the audit trail records of a request once it is answered. */
export interface AuditNote {
  caller: Caller;
  action: string;
  memoIds: Set<string>;
  query?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    auditNote?: AuditNote;
  }
}

export function callerOf(principal: Principal, projectId: string): Caller {
  if (principal.kind === 'organization') return { projectId, keyId: null, subject: null, owner: true, scopes: SCOPES, space: [], expiresAt: null };
  const { keyId, subject, owner, scopes, space, expiresAt } = principal;
  return { projectId, keyId, subject, owner, scopes, space, expiresAt };
}

export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.owner || caller.scopes.includes(scope);
}

/**
 * The route's scope against the caller's: `Access denied` outside it. A route that declares no
 * access is for owners only, so a route added without thinking of scopes is closed to scoped keys.
 */
export function checkAccess(request: FastifyRequest, principal: Principal, projectId: string): Caller {
  const caller = callerOf(principal, projectId);
  const access = request.routeOptions.config.access;
  request.auditNote = { caller, action: access?.action ?? `${request.method} ${request.routeOptions.url ?? ''}`, memoIds: new Set() };
  const allowed = caller.owner || (access !== undefined && (access.scope === 'any' || (access.scope !== 'owner' && caller.scopes.includes(access.scope))));
  if (!allowed) throw new MemexError('AccessDenied');
  return caller;
}

/** Names memos a call read, changed or returned, for its audit entry. */
export function noteMemoIds(request: FastifyRequest, ids: Iterable<string | null | undefined>): void {
  const note = request.auditNote;
  if (!note) return;
  for (const id of ids) if (id) note.memoIds.add(id);
}

/** The search/chat/generate text a call carried, recorded as MEMEX_AUDIT_QUERIES says. */
export function noteQuery(request: FastifyRequest, text: string): void {
  if (request.auditNote) request.auditNote.query = text;
}
