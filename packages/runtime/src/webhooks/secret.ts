import type { WebhookRecord } from '@memex/contracts';
import { isKeyErased, type Keyring } from '../keyring/keyring';

/**
 * A webhook's signing secret is sealed with a data key of its own in the keyring (the bucket of
 * memo keys, under an id no memo has), so reading `memex_webhooks` reveals no secret, and deleting
 * the webhook shreds that key: the secret is erased, not just deleted. Key rotation leaves it be.
 */
const keyId = (webhookId: string) => `webhook:${webhookId}`;

export async function sealWebhookSecret(keyring: Keyring, projectId: string, webhookId: string, secret: string): Promise<string> {
  await keyring.create(projectId, keyId(webhookId));
  return keyring.sealJson(projectId, keyId(webhookId), secret, { deflate: false });
}

/** The secret a delivery signs with; undefined once the webhook's key is shredded. */
export async function openWebhookSecret(keyring: Keyring, record: WebhookRecord): Promise<string | undefined> {
  if (record.secret_sealed === undefined) return record.secret;
  try {
    return await keyring.openJson<string>(record.project_id, keyId(record.webhook_id), record.secret_sealed);
  } catch (error) {
    if (isKeyErased(error)) return undefined;
    throw error;
  }
}

export function shredWebhookSecret(keyring: Keyring, projectId: string, webhookId: string): Promise<void> {
  return keyring.shred(projectId, keyId(webhookId));
}
