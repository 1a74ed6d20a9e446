import { MemexApiError, MemexClient, type ProjectInfo, type Scope } from '@memex/client';

/** The tab's credentials: session storage only (gone when the tab closes), never in a URL. */
export interface Session {
  apiKey: string;
  projectId?: string;
}

const KEY = 'memex.session';

export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(KEY, JSON.stringify(session));
  else sessionStorage.removeItem(KEY);
}

export function clientFor(session: Session): MemexClient {
  return new MemexClient({ baseUrl: location.origin, apiKey: session.apiKey, ...(session.projectId ? { projectId: session.projectId } : {}), maxRetries: 2 });
}

/** What the signed-in key may do (GET /api/v1/project's `access`); the console hides the rest. */
export type Access = ProjectInfo['access'];

export function can(access: Access | undefined, scope: Scope): boolean {
  return !access || access.owner || access.scopes.includes(scope);
}

/** The API's own message for an error, as the console shows it. */
export function errorMessage(error: unknown): string {
  if (error instanceof MemexApiError) return `${error.message} (HTTP ${error.status})`;
  if (error instanceof Error) return error.message;
  return String(error);
}
