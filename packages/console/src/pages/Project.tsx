import { useState } from 'preact/hooks';
import type { MemexClient, RotatedKey } from '@memex/client';
import type { Access } from '../session';
import { ErrorNote, useLoad, when } from '../ui';

export function ProjectPage({ client, onKeyRotated, access }: { client: MemexClient; onKeyRotated: (apiKey: string) => void; access?: Access | undefined }) {
  const info = useLoad(() => client.getProject(), [client]);
  const memos = useLoad(() => client.listMemos({ page_size: 1 }), [client]);
  const [rotated, setRotated] = useState<RotatedKey>();
  const [error, setError] = useState<unknown>();
  const rotate = async () => {
    if (!confirm('Rotate the project key? Every current key, this one included, stops working within a second.')) return;
    try {
      const key = await client.rotateProjectKey();
      setRotated(key);
      onKeyRotated(key.api_key);
    } catch (err) {
      setError(err);
    }
  };
  const p = info.data;
  return (
    <section aria-labelledby="project-h">
      <h1 id="project-h">Project {p ? `“${p.name}”` : ''}</h1>
      <ErrorNote error={info.error} />
      {p && (
        <>
          <dl class="facts">
            <dt>Project ID</dt><dd><code>{p.project_id}</code></dd>
            <dt>Organization</dt><dd><code>{p.organization_id}</code></dd>
            <dt>Created</dt><dd>{when(p.created_at)}</dd>
            <dt>Memos</dt><dd>{memos.data ? memos.data.count.toLocaleString() : '—'}</dd>
          </dl>
          <h2>Rate limit and usage</h2>
          {p.rate_limit ? (
            <dl class="facts" data-testid="rate-limit">
              <dt>Limit</dt><dd>{p.rate_limit.limit.toLocaleString()} requests per {p.rate_limit.window_ms / 1000} s</dd>
              <dt>Used this window</dt><dd>{(p.rate_limit.limit - p.rate_limit.remaining).toLocaleString()} <meter min={0} max={p.rate_limit.limit} value={p.rate_limit.limit - p.rate_limit.remaining} aria-label="share of the limit used" /></dd>
              <dt>Window resets in</dt><dd>{p.rate_limit.reset_s} s</dd>
            </dl>
          ) : <p>No rate limit is set on this gateway.</p>}
          <h2>Embedding model</h2>
          <dl class="facts">
            <dt>Active model</dt><dd><code>{p.embedding.active_model ?? 'none yet'}</code></dd>
            <dt>Re-index</dt>
            <dd>
              {p.embedding.reindex ? (
                <>to <code>{p.embedding.reindex.model}</code>: {p.embedding.reindex.started ? `${p.embedding.reindex.replayed ?? 0} of ${p.embedding.reindex.total ?? '?'} events replayed` : 'waiting for an indexer'}
                  {p.embedding.reindex.total ? <progress max={p.embedding.reindex.total} value={p.embedding.reindex.replayed ?? 0} aria-label="re-index progress" /> : null}</>
              ) : 'none in progress'}
            </dd>
          </dl>
          <button onClick={info.reload}>Refresh</button>
        </>
      )}
      {access && (
        <>
          <h2>This key</h2>
          <dl class="facts" data-testid="key-access">
            <dt>Key ID</dt><dd><code>{access.key_id ?? 'organization token'}</code>{access.subject ? ` (token for ${access.subject})` : ''}</dd>
            <dt>Scopes</dt><dd>{access.owner ? 'owner: every scope' : access.scopes.join(', ')}</dd>
            <dt>Knowledge space</dt>
            <dd>{access.filters.length === 0 ? 'the whole project' : <code>{access.filters.map((f) => `${f.field} ${f.operator} ${JSON.stringify(f.value)}`).join(' AND ')}</code>}</dd>
            <dt>Expires</dt><dd>{access.expires_at ? when(access.expires_at) : 'never'}</dd>
          </dl>
        </>
      )}
      {(!access || access.owner) && (
        <>
          <h2>API key</h2>
          <p>Rotating issues a new key and revokes every older one. The new key is shown once, here; this tab switches to it.</p>
          <button class="danger" onClick={rotate}>Rotate key</button>
        </>
      )}
      <ErrorNote error={error} />
      {rotated && (
        <div class="newkey" role="status">
          <p>New key (copy it now; it is not shown again):</p>
          <code data-testid="new-key">{rotated.api_key}</code>
          <button onClick={() => void navigator.clipboard?.writeText(rotated.api_key)}>Copy</button>
        </div>
      )}
    </section>
  );
}
