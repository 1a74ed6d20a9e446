import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { Buckets, Headers } from '@memex/contracts';
import { deflateIfSmallerOffThread, inflateRawOffThread } from '../compression';
import { forgetDerivedIds, pooledRandomBytes } from '../ids/ids';
import { requestReply } from '../nats/replyInbox';
import { publishToStream } from '../nats/streamPublish';

/**
 * Format byte of sealed data, so the scheme can change without guessing: 1, AES-256-GCM of the bytes;
 * 2, AES-256-GCM of their raw deflate (text, JSON). Both open; sealing picks 2 when it is smaller.
 */
const PLAIN = 1;
const DEFLATED = 2;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** How long a key's read or first write waits for JetStream (nats.js's JetStream default). */
const JETSTREAM_TIMEOUT_MS = 5_000;

/** The memo's data key is gone: everything sealed with it is erased. Consumers ack and skip. */
export class KeyErasedError extends Error {
  constructor(
    readonly projectId: string,
    readonly memoId: string,
  ) {
    super(`the data key of memo ${memoId} is erased`);
    this.name = 'KeyErasedError';
  }
}

/** Sealed bytes that do not open with this memo's key (tampered, or another memo's). */
export class SealBrokenError extends Error {
  constructor(memoId: string, cause?: unknown) {
    super(`sealed data of memo ${memoId} does not open with its key`, { cause });
    this.name = 'SealBrokenError';
  }
}

export const isKeyErased = (error: unknown): error is KeyErasedError => error instanceof KeyErasedError;

export interface KeyringOptions {
  replicas?: number;
  /** Keys kept in memory (least recently used go first). */
  cacheSize?: number;
  bucket?: string;
  /**
   * Deflate what shrinks before sealing (format 2; default true). Versions before it open format 1
   * only: while they still run beside this one (a rolling upgrade), seal without (MEMEX_SEAL_DEFLATE=false).
   */
  deflate?: boolean;
}

/**
 * Seal options for what crosses the bus and is not kept: commands (the work queue holds one until
 * it is handled) and outgoing events (held until every consumer has them). Deflating those costs the
 * sender and the receiver CPU on every message for bytes that are gone within moments.
 */
export const SEAL_FOR_TRANSIT: Readonly<SealOptions> = Object.freeze({ deflate: false });

const b64url = (value: string) => Buffer.from(value, 'utf8').toString('base64url');
/** KV keys allow `[-/_=.a-zA-Z0-9]`; project ids are free-form, so both parts are encoded. */
const kvKey = (projectId: string, memoId: string) => `${b64url(projectId)}.${b64url(memoId)}`;
const aad = (projectId: string, memoId: string) => Buffer.from(`memex:memo:${projectId}:${memoId}`, 'utf8');

export interface SealOptions {
  /**
   * Deflate before sealing when that is smaller (default: the keyring's `deflate`). False for what
   * is sealed often and kept briefly, where deflate's CPU buys nothing (bus messages).
   */
  deflate?: boolean;
}

/**
 * Per-memo data keys for crypto-shredding. One random 256-bit key per memo, held in a NATS KV bucket
 * with history 1, outside the event log and the bus streams. Sealing is AES-256-GCM with a random
 * 96-bit nonce per call and the project and memo ids as associated data, so bytes sealed for one memo
 * never open as another's. `shred` erases the key's message on disk (JetStream erase overwrites it),
 * which makes every sealed copy (events, bus messages, blobs, backups of them) unreadable.
 */
export class Keyring {
  private readonly cache = new Map<string, Buffer>();
  private readonly cacheSize: number;
  private readonly deflate: boolean;
  private watching: { stop(): void } | undefined;
  private readonly shredListeners: Array<() => void> = [];

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly bucket: string,
    /** Whether the bucket's stream answers direct gets (see `stored`). */
    private readonly direct: boolean,
    options: KeyringOptions,
  ) {
    this.cacheSize = options.cacheSize ?? 10_000;
    this.deflate = options.deflate ?? true;
  }

  static async open(nc: NatsConnection, options: KeyringOptions = {}): Promise<Keyring> {
    const bucket = options.bucket ?? Buckets.memoKeys;
    const kv = await new Kvm(nc).create(bucket, { history: 1, replicas: options.replicas ?? 1, storage: 'file' });
    const jsm = await jetstreamManager(nc);
    const direct = (await jsm.streams.info(`KV_${bucket}`)).config.allow_direct === true;
    const ring = new Keyring(nc, kv, jsm, bucket, direct, options);
    await ring.watchShreds();
    return ring;
  }

  /** Drops a key from this process's cache as soon as any process shreds it, and the tag and chunk ids derived lately. */
  private async watchShreds(): Promise<void> {
    const watch = await this.kv.watch({ include: 'updates' });
    this.watching = watch;
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation !== 'PUT') {
          this.cache.delete(entry.key);
          forgetDerivedIds();
          for (const listener of this.shredListeners) listener();
        }
      }
    })().catch(() => undefined);
  }

  /**
   * Calls `listener` whenever any process shreds a memo's key (after this process dropped the key):
   * for what a service keeps of memos' plaintext in memory without knowing whose it is, to drop it.
   */
  onShred(listener: () => void): void {
    this.shredListeners.push(listener);
  }

  /**
   * The memo's key, created when it has none. Creation is compare-and-set: of two racing creators
   * both end with the one key stored. A memo whose key was shredded gets a new key only through
   * `create`, never implicitly: erased stays erased.
   */
  async create(projectId: string, memoId: string): Promise<void> {
    const id = kvKey(projectId, memoId);
    if (this.cache.has(id)) return;
    if (this.direct) {
      // The usual case, a memo never keyed: stored only if its subject has no message yet, published
      // on the shared reply inbox (nats.js's kv.create is a request(): an Error per call, see
      // `stored`). Anything else (the key exists, a shredded memo keyed again, no answer) goes the
      // long way below, where a key this publish did store is the one found.
      const key = randomBytes(KEY_BYTES);
      const headers = natsHeaders();
      headers.set(Headers.expectedLastSubjectSequence, '0');
      const stored = await publishToStream(this.nc, this.keySubject(id), key, { headers, timeoutMs: JETSTREAM_TIMEOUT_MS }).then(
        () => true,
        () => false,
      );
      if (stored) {
        this.remember(id, key);
        return;
      }
    }
    try {
      const key = randomBytes(KEY_BYTES);
      await this.kv.create(id, key);
      // The creator seals the memo's first content and command next: no read back needed.
      this.remember(id, key);
    } catch (error) {
      // Lost the race, or the key exists already: the stored key is the key.
      if ((await this.load(projectId, memoId)) === undefined) throw error;
    }
  }

  /**
   * Creates the keys of many memos of a project, as `create` does each, their writes pipelined: all
   * sent at once and their acknowledgements awaited together, not one round trip after another.
   */
  async createMany(projectId: string, memoIds: readonly string[]): Promise<void> {
    await Promise.all(memoIds.map((memoId) => this.create(projectId, memoId)));
  }

  private async load(projectId: string, memoId: string): Promise<Buffer | undefined> {
    const id = kvKey(projectId, memoId);
    const cached = this.cache.get(id);
    if (cached) {
      this.cache.delete(id);
      this.cache.set(id, cached);
      return cached;
    }
    const value = await this.stored(id);
    if (!value || value.length !== KEY_BYTES) return undefined;
    const key = Buffer.from(value);
    this.remember(id, key);
    return key;
  }

  /**
   * A key's stored bytes, undefined when it has none (never created, or shredded: a purge marker).
   * Read by JetStream's direct get on the connection's shared reply inbox, not `kv.get`: nats.js
   * settles every request it makes by building an Error with its stack trace, and each service reads
   * each memo's key once, so that cost would be paid per memo in every service.
   * A bucket whose stream has no direct gets (made by another client) is read by `kv.get`.
   */
  private async stored(id: string): Promise<Uint8Array | undefined> {
    if (!this.direct) {
      const entry = await this.kv.get(id);
      return entry && entry.operation === 'PUT' ? entry.value : undefined;
    }
    const subject = `$JS.API.DIRECT.GET.KV_${this.bucket}.${this.keySubject(id)}`;
    const msg = await requestReply(this.nc, subject, new Uint8Array(0), { timeoutMs: JETSTREAM_TIMEOUT_MS });
    const code = msg.headers?.code ?? 0;
    if (code === 404) return undefined;
    if (code !== 0) throw new Error(`JetStream answered the read of a memo key with ${code} ${msg.headers?.description ?? ''}`.trim());
    // (a shredded key's last message is its purge marker; a delete marker reads as gone too)
    const operation = msg.headers?.get(Headers.kvOperation) || 'PUT';
    return operation === 'PUT' ? msg.data : undefined;
  }

  /** The subject of a key's messages in the bucket's stream (as nats.js's KV writes them). */
  private keySubject(id: string): string {
    return `$KV.${this.bucket}.${id}`;
  }

  private remember(id: string, key: Buffer): void {
    this.cache.set(id, key);
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
  }

  private async key(projectId: string, memoId: string): Promise<Buffer> {
    const key = await this.load(projectId, memoId);
    if (!key) throw new KeyErasedError(projectId, memoId);
    return key;
  }

  async has(projectId: string, memoId: string): Promise<boolean> {
    return (await this.load(projectId, memoId)) !== undefined;
  }

  /**
   * Seals bytes with the memo's data key, deflated first when that makes them smaller (memo text and
   * JSON shrink 2-3×; already compressed files are sealed as they are). Compression before
   * encryption lets the sealed length hint at how repetitive the plaintext is; everything in one
   * sealed box comes from the same memo, whose owner wrote all of it.
   */
  async seal(projectId: string, memoId: string, plaintext: Uint8Array, { deflate = this.deflate }: SealOptions = {}): Promise<Buffer> {
    const key = await this.key(projectId, memoId);
    const deflated = deflate ? await deflateIfSmallerOffThread(plaintext) : undefined;
    const nonce = pooledRandomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(aad(projectId, memoId));
    const body = cipher.update(deflated ?? plaintext);
    cipher.final();
    return Buffer.concat([Buffer.of(deflated ? DEFLATED : PLAIN), nonce, body, cipher.getAuthTag()]);
  }

  async open(projectId: string, memoId: string, sealed: Uint8Array): Promise<Buffer> {
    const key = await this.key(projectId, memoId);
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    const format = bytes[0];
    if (bytes.byteLength < 1 + NONCE_BYTES + TAG_BYTES || (format !== PLAIN && format !== DEFLATED)) throw new SealBrokenError(memoId);
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 1 + NONCE_BYTES));
    decipher.setAAD(aad(projectId, memoId));
    decipher.setAuthTag(bytes.subarray(bytes.byteLength - TAG_BYTES));
    try {
      const body = decipher.update(bytes.subarray(1 + NONCE_BYTES, bytes.byteLength - TAG_BYTES));
      decipher.final();
      return format === DEFLATED ? await inflateRawOffThread(body) : body;
    } catch (error) {
      throw new SealBrokenError(memoId, error);
    }
  }

  /** A keyed digest of `bytes` (HMAC-SHA256, hex): equal inputs compare equal; unguessable without the key. */
  async digest(projectId: string, memoId: string, bytes: Uint8Array): Promise<string> {
    const key = await this.key(projectId, memoId);
    return createHmac('sha256', key).update('memex:digest:').update(bytes).digest('hex');
  }

  /** Seals a JSON value as a base64 string (for fields of JSON messages and rows). */
  async sealJson(projectId: string, memoId: string, value: unknown, options: SealOptions = {}): Promise<string> {
    return (await this.seal(projectId, memoId, Buffer.from(JSON.stringify(value), 'utf8'), options)).toString('base64');
  }

  async openJson<T>(projectId: string, memoId: string, sealed: string): Promise<T> {
    return JSON.parse((await this.open(projectId, memoId, Buffer.from(sealed, 'base64'))).toString('utf8')) as T;
  }

  /**
   * Erases the memo's key: its stored message is deleted with erase (JetStream overwrites the bytes
   * in the store file), then a purge marker records that it is gone. Idempotent.
   */
  async shred(projectId: string, memoId: string): Promise<void> {
    const id = kvKey(projectId, memoId);
    this.cache.delete(id);
    const entry = await this.kv.get(id);
    if (entry && entry.operation === 'PUT') {
      await this.jsm.streams.deleteMessage(`KV_${this.bucket}`, entry.revision, true).catch((error: unknown) => {
        // Already removed by a concurrent shred.
        if (!/no message found|not found/i.test(String((error as Error).message))) throw error;
      });
    }
    await this.kv.purge(id);
    this.cache.delete(id);
  }

  close(): void {
    this.watching?.stop();
  }
}

