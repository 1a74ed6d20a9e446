import type { FastifyInstance } from 'fastify';
import { AuditQuery, AuditResponse, ErrorResponse, parseAuditQuery } from '@memex/contracts';
import { requestContext, requestedProject, type GatewayDeps } from '../http/context';

/** The audit trail, oldest first, in pages (scope `audit:read`). */
export function auditRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get(
    '/api/v1/audit',
    {
      config: { access: { scope: 'audit:read', action: 'audit.read' } },
      schema: {
        operationId: 'listAudit',
        summary: 'Read the audit trail',
        description:
          'Who touched what: every authenticated call of the project (time, key id or token subject, action, status, ' +
          'request id and the memo ids it read, changed or returned), oldest first. `after` is a cursor (an entry id or ' +
          'the previous `next`); `key_id`, `memo_id` and `action` narrow the answer. Never content or secrets; query ' +
          'text only as MEMEX_AUDIT_QUERIES says. Entries are written within ~50 ms of the answer and kept MEMEX_AUDIT_RETENTION.',
        tags: ['access'],
        querystring: AuditQuery,
        response: { 200: AuditResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      const ctx = requestContext(deps, request, reply, requestedProject(request.query));
      const filter = parseAuditQuery(request.query as Record<string, unknown>);
      return deps.audit!.read(ctx.projectId, filter);
    },
  );
}
