import type { FastifyRequest } from 'fastify';
import { MemexError } from '@memex/contracts';
import type { Principal, ProjectRecord } from '@memex/runtime';

export interface Credentials {
  authenticate(secret: string): Principal | undefined;
  project(id: string): ProjectRecord | undefined;
}

/**
 * Who is calling: `Authorization: Bearer <secret>` with a project API key or an organization token.
 * No usable header is 401; a secret we don't know (or that was revoked) is 403.
 */
export function authenticate(credentials: Credentials, request: FastifyRequest): Principal {
  const header = request.headers.authorization;
  if (!header) throw new MemexError('MissingApiKey');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new MemexError('MissingApiKey');
  const principal = credentials.authenticate(match[1]!);
  if (!principal) throw new MemexError('InvalidApiKey');
  return principal;
}

/**
 * The project a request acts on. A project key acts on its own project (naming another one is
 * `Access denied`); an organization token must name a project of its organization.
 */
export function projectFor(credentials: Credentials, principal: Principal, requested: string | undefined): string {
  if (principal.kind === 'project') {
    if (requested !== undefined && requested.toLowerCase() !== principal.projectId) throw new MemexError('AccessDenied');
    return principal.projectId;
  }
  if (requested === undefined) throw new MemexError('ProjectIdRequired');
  const project = credentials.project(requested.toLowerCase());
  if (!project || project.organizationId !== principal.organizationId) throw new MemexError('AccessDenied');
  return project.id;
}
