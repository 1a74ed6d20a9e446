import { useState } from 'preact/hooks';
import type { MemexClient } from '@memex/client';
import { ErrorNote, StatusBadge, useLoad, when } from '../ui';
import { MemoForm } from './MemoForm';

export function MemoPage({ client, memoId, canWrite = true }: { client: MemexClient; memoId: string; canWrite?: boolean }) {
  const memo = useLoad(() => client.getMemo(memoId), [client, memoId]);
  const status = useLoad(() => client.getMemoStatus(memoId), [client, memoId]);
  const history = useLoad(() => client.getMemoHistory(memoId), [client, memoId]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>();
  const focusChunk = location.hash.split('?chunk=')[1];
  const refresh = () => {
    memo.reload();
    status.reload();
    history.reload();
  };
  const remove = async () => {
    if (!confirm(`Delete “${memo.data?.title}”? This erases it everywhere and cannot be undone.`)) return;
    try {
      await client.deleteMemo(memoId);
      location.hash = '#/memos';
    } catch (err) {
      setError(err);
    }
  };
  const download = async () => {
    try {
      const file = await client.downloadMemoFile(memoId);
      const url = URL.createObjectURL(new Blob([file.bytes as BlobPart], { type: file.content_type }));
      const a = Object.assign(document.createElement('a'), { href: url, download: file.filename ?? 'file' });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(err);
    }
  };
  if (memo.error) return <ErrorNote error={memo.error} />;
  const m = memo.data;
  if (!m) return <p aria-busy="true">Loading…</p>;
  const hasFile = typeof m.metadata.original_filename === 'string';
  return (
    <article aria-labelledby="memo-h">
      <p><a href="#/memos">← Memos</a></p>
      <div class="row spread">
        <h1 id="memo-h">{m.title}</h1>
        <div class="row">
          {status.data && <StatusBadge status={status.data.status} />}
          <button onClick={refresh}>Refresh</button>
          {canWrite && <button onClick={() => setEditing((e) => !e)} aria-expanded={editing}>{editing ? 'Cancel' : 'Edit'}</button>}
          {hasFile && <button onClick={download}>Download original</button>}
          {canWrite && <button class="danger" onClick={remove}>Delete</button>}
        </div>
      </div>
      <ErrorNote error={error} />
      {status.data?.error_reason && <p class="error" role="alert">Processing failed: {status.data.error_reason}</p>}
      {editing && (
        <MemoForm
          client={client}
          memo={m}
          onSaved={() => {
            setEditing(false);
            refresh();
          }}
        />
      )}
      <dl class="facts">
        <dt>UUID</dt><dd><code>{m.uuid}</code></dd>
        <dt>Reference</dt><dd>{m.client_reference_id ?? '—'}</dd>
        <dt>Source</dt><dd>{m.source ?? '—'}</dd>
        <dt>Type</dt><dd>{m.type}</dd>
        <dt>Created</dt><dd>{when(m.created_at)}</dd>
        <dt>Updated</dt><dd>{when(m.updated_at)}</dd>
        <dt>Processing</dt><dd>{when(status.data?.processing_started_at)} → {when(status.data?.processing_completed_at)}</dd>
        <dt>Tags</dt><dd>{m.tags.length ? m.tags.map((t) => <span class="tag">{t.tag}</span>) : '—'}</dd>
        <dt>Metadata</dt><dd><code>{JSON.stringify(m.metadata)}</code></dd>
      </dl>
      <h2>Summary</h2>
      <p>{m.summary || <em>Not summarized yet.</em>}</p>
      <h2>Content</h2>
      <pre class="content">{m.content}</pre>
      <h2>Chunks ({m.chunks.length})</h2>
      <ol class="chunks">
        {m.chunks.map((c) => (
          <li id={`chunk-${c.uuid}`} class={c.uuid === focusChunk ? 'focused' : ''} tabIndex={-1} ref={(el) => { if (c.uuid === focusChunk) el?.scrollIntoView({ block: 'center' }); }}>
            {c.chunk_content}
          </li>
        ))}
      </ol>
      <h2>History</h2>
      <ErrorNote error={history.error} />
      <table class="list">
        <thead><tr><th scope="col">#</th><th scope="col">Event</th><th scope="col">By</th><th scope="col">When</th><th scope="col">Fields</th><th scope="col">Revision</th></tr></thead>
        <tbody>
          {history.data?.revisions.map((r) => (
            <tr><td>{r.version}</td><td>{r.event}</td><td>{r.actor}</td><td>{when(r.at)}</td><td>{r.fields.join(', ')}</td><td>{r.content_revision ?? ''}{r.content_length !== null ? ` (${r.content_length} chars)` : ''}</td></tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}
