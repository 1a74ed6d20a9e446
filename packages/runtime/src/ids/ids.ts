import { createHash, randomBytes } from 'node:crypto';

/** Namespace for every name-based id Memex derives (chunks, tags, index points). */
export const MEMEX_NAMESPACE = '6f1c9a52-3c2e-4f0e-9d7b-2a8e5b1c4d90';

/** A uuid's 16 bytes. */
export function uuidToBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replaceAll('-', ''), 'hex');
}

/** The uuid (lowercase, with dashes) of the 16 bytes at `offset`. */
export function uuidFromBytes(bytes: Buffer, offset = 0): string {
  const hex = bytes.toString('hex', offset, offset + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Every tag and chunk id hashes the namespace's bytes first: parsed once. */
const MEMEX_NAMESPACE_BYTES = uuidToBytes(MEMEX_NAMESPACE);

/** RFC 9562 version 5 (SHA-1, name-based): the same name always gives the same id. */
export function uuidV5(name: string, namespace: string = MEMEX_NAMESPACE): string {
  const namespaceBytes = namespace === MEMEX_NAMESPACE ? MEMEX_NAMESPACE_BYTES : uuidToBytes(namespace);
  const hash = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest().subarray(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return uuidFromBytes(hash);
}

/** Random bytes drawn at once, handed out a few at a time (see {@link pooledRandomBytes}). */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomPoolAt = 0;

/**
 * `size` (≤ 4096) fresh bytes of the CSPRNG, as `randomBytes(size)` gives them, from a pool filled
 * 4 KiB at a time, not a call of `randomBytes` per id and per nonce (several per memo in every
 * service). No byte is handed out twice: a spent pool is replaced, never
 * refilled, so a buffer handed out (a view of it) never changes. For bytes used at once (ids,
 * nonces): a view kept keeps its whole pool alive, so what is kept (keys) takes `randomBytes`.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (size > RANDOM_POOL_BYTES) return randomBytes(size);
  if (randomPoolAt + size > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomPoolAt = 0;
  }
  const bytes = randomPool.subarray(randomPoolAt, randomPoolAt + size);
  randomPoolAt += size;
  return bytes;
}

/** RFC 9562 version 7: time-ordered, so ids sort by creation and index well. */
export function uuidV7(now: number = Date.now()): string {
  const bytes = pooledRandomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return uuidFromBytes(bytes);
}

/** The id of chunk `index` of a memo's content revision; stable across redeliveries and restarts. */
export function chunkId(memoId: string, revision: number, index: number): string {
  return derivedId(`chunk:${memoId}:${revision}:${index}`);
}

/** The id of a tag on a memo: the same tag keeps its id across revisions. */
export function tagId(memoId: string, tag: string): string {
  return derivedId(`tag:${memoId}:${tag}`);
}

/**
 * Tag and chunk ids derived lately, by name. A memo's are derived again each time it is read (a
 * SHA-1 each), which this spares repeated GETs. Bounded, the oldest dropped first; emptied whenever
 * any process shreds a memo's key (a tag's name is memo data), as the keyring calls
 * {@link forgetDerivedIds}.
 */
const derivedIds = new Map<string, string>();
export const DERIVED_IDS_HELD = 4096;

function derivedId(name: string): string {
  let id = derivedIds.get(name);
  if (id === undefined) {
    id = uuidV5(name);
    if (derivedIds.size >= DERIVED_IDS_HELD) derivedIds.delete(derivedIds.keys().next().value!);
    derivedIds.set(name, id);
  }
  return id;
}

/** Empties the cache of derived tag and chunk ids (see {@link tagId}). */
export function forgetDerivedIds(): void {
  derivedIds.clear();
}

/** How many derived tag and chunk ids the cache holds. */
export function derivedIdsHeld(): number {
  return derivedIds.size;
}
