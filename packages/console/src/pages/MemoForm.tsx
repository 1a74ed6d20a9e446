import { useState } from 'preact/hooks';
import type { MemexClient, Memo } from '@memex/client';
import { ErrorNote } from '../ui';

/** Create a text memo, or edit one (only changed fields are sent). */
export function MemoForm({ client, memo, onSaved }: { client: MemexClient; memo?: Memo; onSaved: (uuid: string) => void }) {
  const [title, setTitle] = useState(memo?.title ?? '');
  const [content, setContent] = useState(memo?.content ?? '');
  const [source, setSource] = useState(memo?.source ?? '');
  const [tags, setTags] = useState(memo ? '' : '');
  const [referenceId, setReferenceId] = useState(memo?.client_reference_id ?? '');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (memo) {
        const changes: Record<string, unknown> = {};
        if (title !== memo.title) changes.title = title;
        if (content !== memo.content) changes.content = content;
        if ((source || null) !== memo.source) changes.source = source || null;
        if ((referenceId || null) !== memo.client_reference_id) changes.client_reference_id = referenceId || null;
        await client.updateMemo(memo.uuid, changes);
        onSaved(memo.uuid);
      } else {
        const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
        const res = await client.createMemo({
          title,
          content,
          ...(source ? { source } : {}),
          ...(referenceId ? { reference_id: referenceId } : {}),
          ...(tagList.length ? { tags: tagList } : {}),
        });
        onSaved(res.memo_uuid);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="memo-form" onSubmit={submit} aria-label={memo ? 'Edit memo' : 'New memo'}>
      <label>Title <input required maxLength={255} value={title} onInput={(e) => setTitle(e.currentTarget.value)} /></label>
      <label>Content <textarea required rows={8} value={content} onInput={(e) => setContent(e.currentTarget.value)} /></label>
      <div class="row">
        <label>Source <input value={source} onInput={(e) => setSource(e.currentTarget.value)} /></label>
        <label>Reference id <input value={referenceId} onInput={(e) => setReferenceId(e.currentTarget.value)} /></label>
        {!memo && <label>Tags (comma-separated) <input value={tags} onInput={(e) => setTags(e.currentTarget.value)} /></label>}
      </div>
      <button type="submit" disabled={busy}>{busy ? 'Saving…' : memo ? 'Save changes' : 'Create memo'}</button>
      <ErrorNote error={error} />
    </form>
  );
}
