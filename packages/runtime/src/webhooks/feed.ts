import type { FeedEventBody, StoredFeedEvent } from '@memex/contracts';
import { KeyErasedError, type Keyring } from '../keyring/keyring';

/** Seals a public event's reference id with the memo's key for storing in the feed. */
export async function sealFeedEvent(keyring: Keyring, body: FeedEventBody): Promise<StoredFeedEvent> {
  if (body.client_reference_id === null) return body;
  const sealed = await keyring.sealJson(body.project_id, body.memo_uuid, body.client_reference_id);
  return { ...body, client_reference_id: null, client_reference_sealed: sealed };
}

/** The public event a stored feed message holds: its reference id opened, or null once the memo is erased. */
export async function openFeedEvent(keyring: Keyring, stored: StoredFeedEvent): Promise<FeedEventBody> {
  // What spaces read stays in the feed: the public event never carries it.
  const { client_reference_sealed: sealed, space_sealed: _space, space_digests: _digests, ...body } = stored;
  if (sealed === undefined) return body;
  try {
    return { ...body, client_reference_id: await keyring.openJson<string>(body.project_id, body.memo_uuid, sealed) };
  } catch (error) {
    if (error instanceof KeyErasedError) return { ...body, client_reference_id: null };
    throw error;
  }
}
