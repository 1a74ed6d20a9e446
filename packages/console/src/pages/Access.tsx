import { useState } from 'preact/hooks';
import type { AuditEntry, AuditQuery, CreatedKey, Filter, KeyInfo, MemexClient, Scope } from '@memex/client';
import type { Access } from '../session';
import { ErrorNote, useLoad, when } from '../ui';

/** A knowledge space as one line: `user_id eq "u1" AND …`, or the whole project. */
export function spaceText(filters: readonly Filter[]): string {
  return filters.length === 0 ? 'the whole project' : filters.map((f) => `${f.field} ${f.operator} ${JSON.stringify(f.value)}`).join(' AND ');
}

function parseFilters(text: string): Filter[] {
  if (text.trim() === '') return [];
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) throw new Error('Filters must be a JSON list of Filter objects');
  return value as Filter[];
}

function KeyRow({ k, onDelete }: { k: KeyInfo; onDelete: (k: KeyInfo) => void }) {
  return (
    <tr data-key-id={k.key_id}>
      <td>{k.name}<div class="muted"><code>{k.key_id}</code></div></td>
      <td>{k.scopes.join(', ')}</td>
      <td><code>{spaceText(k.filters)}</code></td>
      <td>{k.expires_at ? when(k.expires_at) : 'never'}</td>
      <td>{when(k.created_at)}</td>
      <td>{when(k.last_used_at)}</td>
      <td><button class="danger" onClick={() => onDelete(k)}>Delete</button></td>
    </tr>
  );
}

/**
 * The project's keys (scope keys:admin): each with its scopes and space, a form that makes a key
 * (its secret shown once), and revocation. A key may grant only what it holds, so the form offers
 * the signed-in key's own scopes.
 */
export function KeysPage({ client, access }: { client: MemexClient; access: Access | undefined }) {
  const keys = useLoad(() => client.listKeys(), [client]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [filters, setFilters] = useState(access && access.filters.length > 0 ? JSON.stringify(access.filters) : '');
  const [expiresAt, setExpiresAt] = useState('');
  const [created, setCreated] = useState<CreatedKey>();
  const [error, setError] = useState<unknown>();
  const offered = access?.scopes ?? [];
  const toggle = (s: Scope) => setScopes((ss) => (ss.includes(s) ? ss.filter((x) => x !== s) : [...ss, s]));
  const create = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const key = await client.createKey({ name: name.trim(), scopes, filters: parseFilters(filters), ...(expiresAt ? { expires_at: new Date(expiresAt).toISOString() } : {}) });
      setCreated(key);
      setName('');
      setScopes([]);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (k: KeyInfo) => {
    if (!confirm(`Delete the key “${k.name}”? It stops working on every gateway within seconds, and so does every token it minted.`)) return;
    try {
      await client.deleteKey(k.key_id);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="keys-h">
      <h1 id="keys-h">Keys</h1>
      <p>Each key is confined to its scopes and its knowledge space: filters ANDed into everything it reads, searches and writes.</p>
      <ErrorNote error={keys.error} />
      {keys.data && (
        <table class="list" data-testid="keys">
          <thead><tr><th>Name</th><th>Scopes</th><th>Knowledge space</th><th>Expires</th><th>Created</th><th>Last used</th><th /></tr></thead>
          <tbody>{keys.data.results.map((k) => <KeyRow key={k.key_id} k={k} onDelete={(x) => void remove(x)} />)}</tbody>
        </table>
      )}
      <button onClick={keys.reload}>Refresh</button>
      <h2>New key</h2>
      <form onSubmit={create}>
        <label>
          Name
          <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {offered.map((s) => (
            <label class="inline" key={s}>
              <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(s)} /> {s}
            </label>
          ))}
        </fieldset>
        <label>
          Knowledge space (filters, JSON; empty: the whole project)
          <textarea name="filters" rows={3} placeholder='[{"field":"user_id","operator":"eq","value":"u42","filter_type":"custom_metadata"}]' value={filters} onInput={(e) => setFilters(e.currentTarget.value)} />
        </label>
        <label>
          Expires at (empty: never)
          <input name="expires_at" type="datetime-local" value={expiresAt} onInput={(e) => setExpiresAt(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={scopes.length === 0}>Create key</button>
      </form>
      <ErrorNote error={error} />
      {created && (
        <div class="newkey" role="status">
          <p>Key “{created.name}” (copy it now; it is not shown again):</p>
          <code data-testid="created-key">{created.api_key}</code>
          <button onClick={() => void navigator.clipboard?.writeText(created.api_key)}>Copy</button>
        </div>
      )}
    </section>
  );
}

/** Who touched what (scope audit:read): the trail oldest first, filtered by key, memo or action. */
export function AuditPage({ client }: { client: MemexClient }) {
  const [draft, setDraft] = useState<AuditQuery>({});
  const [query, setQuery] = useState<AuditQuery>({});
  const [more, setMore] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const page = useLoad(async () => {
    const first = await client.listAudit({ ...query, limit: 100 });
    setMore([]);
    setNext(first.results.length === 100 ? first.next : null);
    return first;
  }, [client, query]);
  const [error, setError] = useState<unknown>();
  const loadMore = async () => {
    if (!next) return;
    try {
      const res = await client.listAudit({ ...query, after: next, limit: 100 });
      setMore((m) => [...m, ...res.results]);
      setNext(res.results.length === 100 ? res.next : null);
    } catch (err) {
      setError(err);
    }
  };
  const field = (name: 'key_id' | 'memo_id' | 'action', label: string) => (
    <label class="inline">
      {label}
      <input name={name} value={draft[name] ?? ''} onInput={(e) => setDraft((d) => ({ ...d, [name]: e.currentTarget.value.trim() || undefined }))} />
    </label>
  );
  const entries = [...(page.data?.results ?? []), ...more];
  return (
    <section aria-labelledby="audit-h">
      <h1 id="audit-h">Audit trail</h1>
      <p>Every authenticated call: who (key, or token subject and the key that minted it), what, and the memos it read, changed or returned. Never content.</p>
      <form class="filters" onSubmit={(e) => (e.preventDefault(), setQuery({ ...draft }))}>
        {field('key_id', 'Key ID')}
        {field('memo_id', 'Memo ID')}
        {field('action', 'Action')}
        <button type="submit">Filter</button>
        <button type="button" onClick={page.reload}>Refresh</button>
      </form>
      <ErrorNote error={page.error ?? error} />
      {page.data && entries.length === 0 && <p>No entries.</p>}
      {entries.length > 0 && (
        <table class="list" data-testid="audit">
          <thead><tr><th>When</th><th>Key</th><th>Subject</th><th>Action</th><th>Status</th><th>Memos</th><th>Request</th></tr></thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} data-action={e.action}>
                <td>{when(e.at)}</td>
                <td><code>{e.key_id ?? 'organization'}</code></td>
                <td>{e.subject ?? '—'}</td>
                <td>{e.action}</td>
                <td>{e.status}</td>
                <td>{e.memo_ids.map((id) => <a key={id} class="memo-id" href={`#/memos/${id}`} title={id} data-memo={id}>…{id.slice(-8)}</a>)}</td>
                <td><code class="muted">{e.request_id}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && <button onClick={() => void loadMore()}>Load more</button>}
    </section>
  );
}
