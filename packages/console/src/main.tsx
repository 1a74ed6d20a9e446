import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { MemexClient } from '@memex/client';
import { AuditPage, KeysPage } from './pages/Access';
import { ChatPage } from './pages/Chat';
import { MemoPage } from './pages/Memo';
import { MemosPage } from './pages/Memos';
import { ProjectPage } from './pages/Project';
import { SearchPage } from './pages/Search';
import { WebhooksPage } from './pages/Webhooks';
import { can, clientFor, errorMessage, loadSession, saveSession, type Access, type Session } from './session';
import { ErrorNote } from './ui';
import './style.css';

/** Hash routes (`#/memos/<uuid>`), so the gateway serves one index.html and no key ever enters a URL. */
function useRoute(): string[] {
  const read = () => (location.hash.replace(/^#\/?/, '').split('?')[0] || 'memos').split('/').map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function SignIn({ onSignedIn }: { onSignedIn: (session: Session, client: MemexClient) => void }) {
  const [apiKey, setApiKey] = useState('');
  const [projectId, setProjectId] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const isOrgToken = apiKey.trim().startsWith('mxo_');
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const session: Session = { apiKey: apiKey.trim(), ...(isOrgToken && projectId.trim() ? { projectId: projectId.trim() } : {}) };
    const client = clientFor(session);
    try {
      await client.getProject();
      saveSession(session);
      onSignedIn(session, client);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Memex console</h1>
      <form onSubmit={submit} aria-describedby="signin-help">
        <p id="signin-help">Sign in with a project API key, or an organization token and the project to open. The key stays in this tab only.</p>
        <label>
          API key or organization token
          <input name="api_key" type="password" autocomplete="off" required value={apiKey} onInput={(e) => setApiKey(e.currentTarget.value)} />
        </label>
        {isOrgToken && (
          <label>
            Project ID
            <input name="project_id" required value={projectId} onInput={(e) => setProjectId(e.currentTarget.value)} />
          </label>
        )}
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}

/** A page and what it needs: a scope, `owner`, or nothing. */
const NAV: [string, string, Parameters<typeof can>[1] | 'owner' | undefined][] = [
  ['memos', 'Memos', 'memos:read'],
  ['search', 'Search', 'search'],
  ['chat', 'Chat', 'chat'],
  ['webhooks', 'Webhooks', 'webhooks:admin'],
  ['keys', 'Keys', 'keys:admin'],
  ['audit', 'Audit', 'audit:read'],
  ['project', 'Project', undefined],
];

function App() {
  const [session, setSession] = useState(loadSession);
  const [client, setClient] = useState(() => (session ? clientFor(session) : undefined));
  const route = useRoute();
  const [access, setAccess] = useState<Access>();
  useEffect(() => {
    setAccess(undefined);
    if (client) void client.getProject().then((p) => setAccess(p.access), () => undefined);
  }, [client]);
  if (!session || !client) return <SignIn onSignedIn={(s, c) => (setSession(s), setClient(c))} />;
  const signOut = () => {
    saveSession(undefined);
    setSession(undefined);
    setClient(undefined);
  };
  /** After a key rotation the tab keeps working with the new key. */
  const replaceKey = (apiKey: string) => {
    const next = { ...session, apiKey };
    saveSession(next);
    setSession(next);
    setClient(clientFor(next));
  };
  const [page, id] = route;
  let body;
  try {
    body =
      page === 'memos' && id ? <MemoPage client={client} memoId={id} canWrite={can(access, 'memos:write')} /> :
      page === 'memos' ? <MemosPage client={client} canWrite={can(access, 'memos:write')} /> :
      page === 'search' ? <SearchPage client={client} apiKeyHint={session.apiKey.slice(0, 4)} /> :
      page === 'chat' ? <ChatPage client={client} chatId={id} /> :
      page === 'webhooks' ? <WebhooksPage client={client} /> :
      page === 'keys' ? <KeysPage client={client} access={access} /> :
      page === 'audit' ? <AuditPage client={client} /> :
      page === 'project' ? <ProjectPage client={client} onKeyRotated={replaceKey} access={access} /> :
      <p>Unknown page.</p>;
  } catch (error) {
    body = <p role="alert">{errorMessage(error)}</p>;
  }
  return (
    <>
      <header class="top">
        <a class="brand" href="#/memos">Memex</a>
        <nav aria-label="Main">
          {NAV.filter(([, , needs]) => !needs || (needs === 'owner' ? !access || access.owner : can(access, needs))).map(([href, label]) => (
            <a href={`#/${href}`} aria-current={page === href ? 'page' : undefined}>{label}</a>
          ))}
        </nav>
        <button class="link" onClick={signOut}>Sign out</button>
      </header>
      <main id="main">{body}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
