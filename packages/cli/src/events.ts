import type { FeedEvent, FeedEventType, Webhook, WebhookDelivery } from '@memex/client';
import { cliClient } from './client';
import { options } from './options';

const common = { key: { type: 'string' }, insecure: { type: 'boolean', short: 'k' }, project: { type: 'string' }, json: { type: 'boolean' } } as const;

function clientFor(values: { key?: string | undefined; insecure?: boolean | undefined; project?: string | undefined }) {
  const client = cliClient(values);
  return values.project ? client.with({ projectId: values.project }) : client;
}

function eventLine(e: FeedEvent): string {
  const extra = e.fields ? ` fields=${e.fields.join(',')}` : e.type === 'memo.failed' ? ` stage=${e.stage ?? ''} reason=${JSON.stringify(e.reason ?? '')}` : '';
  return `${e.id}  ${e.at}  ${e.type.padEnd(14)}  ${e.memo_uuid}${e.revision === null ? '' : `  rev ${e.revision}`}${extra}`;
}

/**
 * `memex events [--project ID] [--after ID] [--types T,T] [--follow] [--json]`: the project's event
 * feed from the start of retention (or after an event id); `--follow` keeps streaming new events.
 * `--json` prints one event per line as JSON.
 */
export async function runEvents(args: string[]): Promise<number> {
  const { values } = options(args, { ...common, after: { type: 'string' }, types: { type: 'string' }, follow: { type: 'boolean' } });
  const client = clientFor(values);
  const types = values.types ? (values.types.split(',').map((t) => t.trim()) as FeedEventType[]) : undefined;
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  try {
    for await (const event of client.events({ ...(values.after ? { after: values.after } : {}), ...(types ? { types } : {}), follow: values.follow === true, signal: controller.signal, limit: 1000 })) {
      console.log(values.json ? JSON.stringify(event) : eventLine(event));
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  }
  return 0;
}

function webhookLine(w: Webhook): string {
  return `${w.webhook_id}  ${w.disabled ? 'disabled' : 'enabled '}  ${w.events.join(',').padEnd(20)}  ${w.url}${w.description ? `  (${w.description})` : ''}${w.disabled_reason ? `  ${w.disabled_reason}` : ''}`;
}

function deliveryLine(d: WebhookDelivery): string {
  return `${d.at}  ${d.event_id}  attempt ${d.attempt}  ${d.status.padEnd(9)}  ${d.response_status ?? '-'}${d.error ? `  ${d.error}` : ''}`;
}

/** `memex webhook create|list|delete|deliveries`. */
export async function runWebhook(action: string, args: string[]): Promise<number> {
  if (action === 'create') {
    const { values } = options(args, { ...common, url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' } });
    if (!values.url) throw new Error('usage: memex webhook create --url URL [--events T,T|*] [--description D]');
    const events = (values.events ?? '*').split(',').map((t) => t.trim()) as (FeedEventType | '*')[];
    const created = await clientFor(values).createWebhook({ url: values.url, events, ...(values.description ? { description: values.description } : {}) });
    if (values.json) console.log(JSON.stringify(created));
    else {
      console.log(`webhook_id: ${created.webhook_id}\nurl:        ${created.url}\nevents:     ${created.events.join(',')}\nsecret:     ${created.secret}`);
      console.error('The secret is shown this once: keep it to verify deliveries (webhook-signature).');
    }
    return 0;
  }
  if (action === 'list') {
    const { values } = options(args, common);
    const hooks = await clientFor(values).listWebhooks();
    if (values.json) console.log(JSON.stringify(hooks));
    else for (const w of hooks) console.log(webhookLine(w));
    return 0;
  }
  if (action === 'delete' || action === 'deliveries') {
    const { values, positionals } = options(args, common);
    const [webhookId] = positionals;
    if (!webhookId) throw new Error(`usage: memex webhook ${action} WEBHOOK_ID`);
    const client = clientFor(values);
    if (action === 'delete') {
      await client.deleteWebhook(webhookId);
      if (!values.json) console.error(`deleted webhook ${webhookId}`);
      return 0;
    }
    const deliveries = await client.listWebhookDeliveries(webhookId);
    if (values.json) console.log(JSON.stringify(deliveries));
    else for (const d of deliveries) console.log(deliveryLine(d));
    return 0;
  }
  throw new Error('usage: memex webhook create|list|delete|deliveries');
}
