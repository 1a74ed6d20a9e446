import { useState } from 'preact/hooks';
import type { Filter, MemexClient } from '@memex/client';
import { ErrorNote, StatusBadge, useLoad, when } from '../ui';
import { MemoForm } from './MemoForm';

interface Upload {
  id: number;
  name: string;
  sent: number;
  total: number;
  state: 'uploading' | 'done' | 'failed';
  error?: unknown;
  memoUuid?: string;
}

let uploadIds = 0;

function filtersOf(source: string, tag: string, metaKey: string, metaValue: string): Filter[] {
  const filters: Filter[] = [];
  if (source.trim()) filters.push({ field: 'source', operator: 'eq', value: source.trim(), filter_type: 'native_field' });
  if (tag.trim()) filters.push({ field: 'tags', operator: 'in', value: [tag.trim()], filter_type: 'native_field' });
  if (metaKey.trim()) filters.push({ field: metaKey.trim(), operator: 'eq', value: metaValue, filter_type: 'custom_metadata' });
  return filters;
}

export function MemosPage({ client, canWrite = true }: { client: MemexClient; canWrite?: boolean }) {
  const [page, setPage] = useState(1);
  const [form, setForm] = useState({ source: '', tag: '', metaKey: '', metaValue: '' });
  const [applied, setApplied] = useState<Filter[]>([]);
  const [creating, setCreating] = useState(false);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  const list = useLoad(() => client.listMemos({ page, page_size: 20, filters: applied }), [client, page, JSON.stringify(applied)]);

  const upload = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      const id = ++uploadIds;
      setUploads((u) => [{ id, name: file.name, sent: 0, total: file.size, state: 'uploading' }, ...u]);
      const update = (change: Partial<Upload>) => setUploads((u) => u.map((x) => (x.id === id ? { ...x, ...change } : x)));
      client
        .uploadMemo(file, file.name, {}, { onProgress: (sent, total) => update({ sent, total }) })
        .then((res) => {
          setUploads((u) => u.map((x) => (x.id === id ? { ...x, state: 'done', sent: x.total, memoUuid: res.memo_uuid } : x)));
          list.reload();
        })
        .catch((error: unknown) => update({ state: 'failed', error }));
    }
  };

  return (
    <section aria-labelledby="memos-h">
      <div class="row spread">
        <h1 id="memos-h">Memos</h1>
        {canWrite && <button onClick={() => setCreating((c) => !c)} aria-expanded={creating}>{creating ? 'Close' : 'New memo'}</button>}
      </div>
      {creating && (
        <MemoForm
          client={client}
          onSaved={() => {
            setCreating(false);
            list.reload();
          }}
        />
      )}
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          upload(e.dataTransfer?.files ?? null);
        }}
      >
        <p>Drop files here (PDF, Office, HTML, Markdown, text) or</p>
        <label class="button">
          choose files
          <input type="file" multiple class="visually-hidden" data-testid="upload-input" onChange={(e) => upload(e.currentTarget.files)} />
        </label>
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {uploads.map((u) => (
            <li>
              <span>{u.name}</span>{' '}
              <progress max={u.total || 1} value={u.sent} aria-label={`Upload of ${u.name}`} />{' '}
              {u.state === 'done' && u.memoUuid ? <a href={`#/memos/${u.memoUuid}`}>uploaded</a> : u.state}
              <ErrorNote error={u.error} />
            </li>
          ))}
        </ul>
      )}
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setApplied(filtersOf(form.source, form.tag, form.metaKey, form.metaValue));
        }}
      >
        <label>Source <input value={form.source} onInput={(e) => setForm({ ...form, source: e.currentTarget.value })} /></label>
        <label>Tag <input value={form.tag} onInput={(e) => setForm({ ...form, tag: e.currentTarget.value })} /></label>
        <label>Metadata key <input value={form.metaKey} onInput={(e) => setForm({ ...form, metaKey: e.currentTarget.value })} /></label>
        <label>equals <input value={form.metaValue} onInput={(e) => setForm({ ...form, metaValue: e.currentTarget.value })} /></label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={list.error} />
      {list.data && (
        <>
          <table class="list">
            <caption class="visually-hidden">Memos, newest first</caption>
            <thead>
              <tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Length</th><th scope="col">Created</th><th scope="col">Reference</th></tr>
            </thead>
            <tbody>
              {list.data.results.map((m) => (
                <tr>
                  <td><a href={`#/memos/${m.uuid}`}>{m.title}</a></td>
                  <td><StatusBadge status={m.processing_status} /></td>
                  <td>{m.content_length.toLocaleString()}</td>
                  <td>{when(m.created_at)}</td>
                  <td>{m.client_reference_id ?? ''}</td>
                </tr>
              ))}
              {list.data.results.length === 0 && <tr><td colSpan={5}>No memos{applied.length ? ' match these filters' : ' yet'}.</td></tr>}
            </tbody>
          </table>
          <nav class="pager" aria-label="Pages">
            <button disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
            <span>Page {list.data.page} of {Math.max(1, list.data.total_pages)} · {list.data.count} memos</span>
            <button disabled={page >= list.data.total_pages} onClick={() => setPage(page + 1)}>Next</button>
            <button onClick={list.reload}>Refresh</button>
          </nav>
        </>
      )}
    </section>
  );
}
