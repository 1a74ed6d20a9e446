import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets, type WebhookRecord } from '@memex/contracts';
import { decodeJson, encodeJson } from '../nats/codec';

/**
 * Webhook registrations in a KV bucket, keyed `<project id>.<webhook id>`, so a project's webhooks
 * are one key filter and no lookup crosses projects. The gateway writes them; every memo instance's
 * dispatcher follows them by a watch.
 */
export class WebhookStore {
  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas = 1): Promise<WebhookStore> {
    return new WebhookStore(await new Kvm(nc).create(Buckets.webhooks, { history: 1, replicas }));
  }

  static key(projectId: string, webhookId: string): string {
    return `${projectId}.${webhookId}`;
  }

  async put(record: WebhookRecord): Promise<void> {
    await this.kv.put(WebhookStore.key(record.project_id, record.webhook_id), encodeJson(record));
  }

  async get(projectId: string, webhookId: string): Promise<WebhookRecord | undefined> {
    const entry = await this.kv.get(WebhookStore.key(projectId, webhookId));
    return entry && entry.operation === 'PUT' && entry.length > 0 ? decodeJson<WebhookRecord>(entry.value) : undefined;
  }

  /** A project's webhooks, oldest first. */
  async list(projectId: string): Promise<WebhookRecord[]> {
    const out: WebhookRecord[] = [];
    for await (const key of await this.kv.keys(`${projectId}.*`)) {
      const [, webhookId] = key.split('.');
      const record = webhookId ? await this.get(projectId, webhookId) : undefined;
      if (record) out.push(record);
    }
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.webhook_id.localeCompare(b.webhook_id));
  }

  async delete(projectId: string, webhookId: string): Promise<void> {
    await this.kv.delete(WebhookStore.key(projectId, webhookId));
  }

  /**
   * Every registration now and every change after: `record` undefined means deleted. `ready`
   * resolves once the current ones have been handed over.
   */
  async follow(onChange: (key: string, record: WebhookRecord | undefined) => void): Promise<{ ready: Promise<void>; stop(): void }> {
    const watch = await this.kv.watch();
    let resolveReady!: () => void;
    const ready = new Promise<void>((r) => (resolveReady = r));
    if ((await this.kv.status()).values === 0) resolveReady();
    void (async () => {
      for await (const entry of watch as AsyncIterable<KvWatchEntry>) {
        onChange(entry.key, entry.operation === 'PUT' && entry.length > 0 ? decodeJson<WebhookRecord>(entry.value) : undefined);
        if (entry.delta === 0) resolveReady();
      }
    })().catch(() => resolveReady());
    return { ready, stop: () => watch.stop() };
  }
}
