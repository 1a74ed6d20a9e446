import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { Buckets, matchesFilters, metadataStrings, type Filter, type FilterableMemo, type MemoAttributes, type StoredFeedEvent } from '@memex/contracts';
import { isKeyErased, type Keyring } from '../keyring/keyring';
import { decodeJson, encodeJson } from '../nats/codec';

/**
 * The keyring id of a project's feed-space digest key (never a memo's: memo ids are uuids). It
 * is never rotated or shredded, so an erased memo's events stay judged the same for as long as
 * the feed keeps them.
 */
export const FEED_SPACE_KEY_ID = 'feed-space';

/** Operators a space may use and still be judged by digests (equality only). */
const DIGEST_OPERATORS: ReadonlySet<string> = new Set(['eq', 'neq', 'in', 'not_in']);

/** What a filter compares, as a digest atom: source, a tag, or one metadata key's value. */
function atom(filter: Pick<Filter, 'field' | 'filter_type'>, value: string): string | undefined {
  if (filter.filter_type === 'custom_metadata') return JSON.stringify(['m', filter.field, value]);
  if (filter.field === 'source') return JSON.stringify(['s', value]);
  if (filter.field === 'tags') return JSON.stringify(['t', value]);
  // Title and reference id are left out on purpose: nothing of them outlives the memo.
  return undefined;
}

/** Whether every filter of a space can be judged by digests alone. */
export function decidableByDigests(space: readonly Filter[]): boolean {
  return space.every((f) => DIGEST_OPERATORS.has(f.operator) && atom(f, '') !== undefined);
}

async function projectDigest(keyring: Keyring, projectId: string, atomText: string): Promise<string> {
  return keyring.digest(projectId, FEED_SPACE_KEY_ID, Buffer.from(atomText, 'utf8'));
}

/** A project digest salted with the memo id, so equal values of two memos do not look alike. */
function salted(memoId: string, digest: string): string {
  return createHash('sha256').update(memoId).update(':').update(digest).digest('base64url').slice(0, 22);
}

export function filterableOf(memo: MemoAttributes): FilterableMemo {
  return { title: memo.title, source: memo.source, clientReferenceId: memo.clientReferenceId, tags: memo.tags, metadata: memo.metadata };
}

/**
 * What the feed records of a memo for spaces to read, as it stands after an event: its filterable
 * attributes sealed with its key, and digests of its source, tags and metadata values for when
 * that key is gone. Makes the project's digest key on first use.
 */
export async function feedSpaceOf(keyring: Keyring, memo: MemoAttributes): Promise<{ space_sealed: string; space_digests: string[] }> {
  const filterable = filterableOf(memo);
  const atoms = new Set<string>();
  if (memo.source !== null) atoms.add(atom({ field: 'source', filter_type: 'native_field' }, memo.source)!);
  for (const tag of memo.tags) atoms.add(atom({ field: 'tags', filter_type: 'native_field' }, tag)!);
  for (const [key, value] of Object.entries(memo.metadata)) {
    for (const v of metadataStrings(value)) atoms.add(atom({ field: key, filter_type: 'custom_metadata' }, v)!);
  }
  await keyring.create(memo.projectId, FEED_SPACE_KEY_ID);
  const digests = await Promise.all([...atoms].map(async (a) => salted(memo.memoId, await projectDigest(keyring, memo.projectId, a))));
  return { space_sealed: await keyring.sealJson(memo.projectId, memo.memoId, filterable), space_digests: digests.sort() };
}

/** Whether a stored feed event lies inside a space. */
export type FeedSpaceCheck = (stored: StoredFeedEvent) => Promise<boolean>;

/**
 * The check for one space of one project. An event is judged by the memo as it stood after it:
 * by its sealed attributes (every operator, exactly `matchesFilters`); once those no longer open
 * (the memo erased, or its tombstone) by its digests, when the space uses only eq, neq, in and
 * not_in on source, tags and metadata. Anything else is outside: an event nothing can judge is
 * never shown to a space.
 */
export async function feedSpaceCheck(keyring: Keyring, projectId: string, space: readonly Filter[]): Promise<FeedSpaceCheck> {
  if (space.length === 0) return async () => true;
  let byDigest: ((memoId: string, digests: ReadonlySet<string>) => boolean) | undefined;
  if (decidableByDigests(space)) {
    try {
      const wanted = await Promise.all(
        space.map(async (f) => ({
          operator: f.operator,
          values: await Promise.all((Array.isArray(f.value) ? f.value : [f.value]).map((v) => projectDigest(keyring, projectId, atom(f, v)!))),
        })),
      );
      byDigest = (memoId, digests) =>
        wanted.every(({ operator, values }) => {
          const hit = values.some((d) => digests.has(salted(memoId, d)));
          return operator === 'eq' || operator === 'in' ? hit : !hit;
        });
    } catch (error) {
      // No digest key yet: no event carries digests to judge by.
      if (!isKeyErased(error)) throw error;
    }
  }
  return async (stored) => {
    if (stored.project_id !== projectId) return false;
    if (stored.space_sealed !== undefined) {
      try {
        return matchesFilters(await keyring.openJson<FilterableMemo>(projectId, stored.memo_uuid, stored.space_sealed), space);
      } catch (error) {
        if (!isKeyErased(error)) return false;
      }
    }
    if (!byDigest || !stored.space_digests) return false;
    return byDigest(stored.memo_uuid, new Set(stored.space_digests));
  };
}

/**
 * Each live memo's latest space digests (keyed, salted: no value readable), so the feed can judge
 * its tombstone once its key and attributes are erased. Written by the feed projector only.
 */
export class FeedSpaces {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas = 1): Promise<FeedSpaces> {
    return new FeedSpaces(await new Kvm(nc).create(Buckets.feedSpaces, { history: 1, replicas }));
  }

  static key(projectId: string, memoId: string): string {
    return `${projectId}.${memoId}`;
  }

  async get(key: string): Promise<string[] | undefined> {
    const entry = await this.kv.get(key);
    return entry && entry.operation === 'PUT' && entry.length > 0 ? decodeJson<string[]>(entry.value) : undefined;
  }

  async put(key: string, digests: string[]): Promise<void> {
    await this.kv.put(key, encodeJson(digests));
  }

  async delete(key: string): Promise<void> {
    await this.kv.purge(key);
  }
}
