import { useState } from 'preact/hooks';
import type { CreatedWebhook, FeedEventType, MemexClient } from '@memex/client';
import { ErrorNote, StatusBadge, useLoad, when } from '../ui';

const TYPES: FeedEventType[] = ['memo.created', 'memo.updated', 'memo.processed', 'memo.failed', 'memo.deleted', 'memo.expired'];

function Deliveries({ client, webhookId }: { client: MemexClient; webhookId: string }) {
  const deliveries = useLoad(() => client.listWebhookDeliveries(webhookId), [client, webhookId]);
  return (
    <section aria-label="Recent deliveries">
      <h3>Recent deliveries <button class="link" onClick={deliveries.reload}>Refresh</button></h3>
      <ErrorNote error={deliveries.error} />
      {deliveries.data && deliveries.data.length === 0 && <p>No deliveries yet.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <table class="list" data-testid="deliveries">
          <thead><tr><th>When</th><th>Event</th><th>Attempt</th><th>Status</th><th>Answer</th></tr></thead>
          <tbody>
            {deliveries.data.map((d) => (
              <tr key={`${d.event_id}-${d.attempt}`}>
                <td>{when(d.at)}</td>
                <td><code>{d.event_id}</code></td>
                <td>{d.attempt}</td>
                <td><StatusBadge status={d.status} /></td>
                <td>{d.response_status ?? '—'}{d.error ? ` ${d.error}` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The project's webhooks: register one (its secret shown once), delete, and see recent deliveries. */
export function WebhooksPage({ client }: { client: MemexClient }) {
  const hooks = useLoad(() => client.listWebhooks(), [client]);
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState<FeedEventType[]>([]);
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<CreatedWebhook>();
  const [selected, setSelected] = useState<string>();
  const [error, setError] = useState<unknown>();
  const toggle = (t: FeedEventType) => setTypes((ts) => (ts.includes(t) ? ts.filter((x) => x !== t) : [...ts, t]));
  const create = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const hook = await client.createWebhook({ url: url.trim(), events: types.length > 0 ? types : ['*'], ...(description.trim() ? { description: description.trim() } : {}) });
      setCreated(hook);
      setUrl('');
      setDescription('');
      setTypes([]);
      hooks.reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (webhookId: string) => {
    if (!confirm('Delete this webhook? Deliveries stop at once.')) return;
    try {
      await client.deleteWebhook(webhookId);
      if (selected === webhookId) setSelected(undefined);
      hooks.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      <p>Memex POSTs the project’s events to each URL, signed with the webhook’s secret (Standard Webhooks: <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).</p>
      <ErrorNote error={hooks.error} />
      {hooks.data && hooks.data.length === 0 && <p>No webhooks yet.</p>}
      {hooks.data && hooks.data.length > 0 && (
        <table class="list">
          <thead><tr><th>URL</th><th>Events</th><th>State</th><th>Created</th><th /></tr></thead>
          <tbody>
            {hooks.data.map((w) => (
              <tr key={w.webhook_id} aria-current={selected === w.webhook_id ? 'true' : undefined}>
                <td><button class="link" onClick={() => setSelected(w.webhook_id)}>{w.url}</button>{w.description ? <div class="muted">{w.description}</div> : null}</td>
                <td>{w.events.join(', ')}</td>
                <td>{w.disabled ? <span title={w.disabled_reason ?? ''}><StatusBadge status="error" /> disabled</span> : 'enabled'}</td>
                <td>{when(w.created_at)}</td>
                <td><button class="danger" onClick={() => void remove(w.webhook_id)}>Delete</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {selected && <Deliveries client={client} webhookId={selected} />}
      <h2>New webhook</h2>
      <form onSubmit={create}>
        <label>
          URL
          <input name="url" type="url" required placeholder="https://example.com/memex" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Events (none ticked: all)</legend>
          {TYPES.map((t) => (
            <label class="inline" key={t}>
              <input type="checkbox" checked={types.includes(t)} onChange={() => toggle(t)} /> {t}
            </label>
          ))}
        </fieldset>
        <label>
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit">Create webhook</button>
      </form>
      <ErrorNote error={error} />
      {created && (
        <div class="newkey" role="status">
          <p>Signing secret for {created.url} (copy it now; it is not shown again):</p>
          <code data-testid="webhook-secret">{created.secret}</code>
          <button onClick={() => void navigator.clipboard?.writeText(created.secret)}>Copy</button>
        </div>
      )}
    </section>
  );
}
