import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Buckets } from '@memex/contracts';
import { eventually, startNatsServer, type NatsServerHandle } from '@memex/testing';
import { derivedIdsHeld, tagId } from '../ids/ids';
import { connectNats } from '../nats/connection';
import { KeyErasedError, Keyring, SEAL_FOR_TRANSIT, SealBrokenError } from './keyring';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
const storeHolds = (dir: string, needle: Buffer) => filesUnder(dir).some((file) => readFileSync(file).includes(needle));

describe('keyring (crypto-shredding)', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let other: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ url: nats.url, name: 'keyring' });
    other = await connectNats({ url: nats.url, name: 'keyring-2' });
  });
  afterAll(async () => {
    await nc?.close();
    await other?.close();
    await nats?.stop();
  });

  it('reads a key once for the events of one memo opened together', async () => {
    const writer = await Keyring.open(nc);
    const reader = await Keyring.open(other);
    const [p, m] = ['project-a', randomUUID()];
    await writer.create(p, m);
    const boxes = await Promise.all(Array.from({ length: 4 }, (_, i) => writer.sealJson(p, m, { n: i })));
    let reads = 0;
    const sub = nc.subscribe(`$JS.API.DIRECT.GET.KV_${Buckets.memoKeys}.>`, { callback: () => void (reads += 1) });
    await nc.flush();
    expect(await Promise.all(boxes.map((box) => reader.openJson(p, m, box)))).toEqual([0, 1, 2, 3].map((n) => ({ n })));
    await other.flush();
    await nc.flush();
    sub.unsubscribe();
    expect(reads).toBe(1);
    writer.close();
    reader.close();
  });

  it('seals and opens bytes and JSON; every seal has its own nonce', async () => {
    const ring = await Keyring.open(nc);
    const [p, m] = ['project-a', randomUUID()];
    await ring.create(p, m);
    const a = await ring.seal(p, m, Buffer.from('the memo text'));
    const b = await ring.seal(p, m, Buffer.from('the memo text'));
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('memo text'))).toBe(false);
    expect((await ring.open(p, m, a)).toString()).toBe('the memo text');
    const sealed = await ring.sealJson(p, m, { title: 'T', tags: ['x'] });
    expect(await ring.openJson(p, m, sealed)).toEqual({ title: 'T', tags: ['x'] });
    ring.close();
  });

  it('deflates what shrinks before sealing, keeps what does not, and opens both formats', async () => {
    const ring = await Keyring.open(nc);
    const [p, m] = ['project-a', randomUUID()];
    await ring.create(p, m);
    const prose = Buffer.from(Array.from({ length: 40 }, (_, i) => `Sentence ${i} of a memo about fog signals and lighthouses.`).join(' '));
    const text = await ring.seal(p, m, prose);
    expect(text[0]).toBe(2);
    expect(text.byteLength).toBeLessThan(prose.byteLength / 2);
    expect((await ring.open(p, m, text)).equals(prose)).toBe(true);
    // Per call, deflate can be left out: what crosses the bus and is not kept.
    const quick = await ring.seal(p, m, prose, SEAL_FOR_TRANSIT);
    expect([quick[0], quick.byteLength]).toEqual([1, prose.byteLength + 29]);
    expect(await ring.openJson(p, m, await ring.sealJson(p, m, { prose: prose.toString() }, { deflate: false }))).toEqual({ prose: prose.toString() });
    // Random bytes (a compressed file), small or large, are sealed as they are: format 1, 29 bytes of overhead.
    for (const size of [200, 100_000]) {
      const noise = randomBytes(size);
      const sealed = await ring.seal(p, m, noise);
      expect([sealed[0], sealed.byteLength]).toEqual([1, size + 29]);
      expect((await ring.open(p, m, sealed)).equals(noise)).toBe(true);
    }
    // A deflated box is authenticated like any other.
    const tampered = Buffer.from(text);
    tampered[20]! ^= 1;
    await expect(ring.open(p, m, tampered)).rejects.toBeInstanceOf(SealBrokenError);
    const unknownFormat = Buffer.from(text);
    unknownFormat[0] = 3;
    await expect(ring.open(p, m, unknownFormat)).rejects.toBeInstanceOf(SealBrokenError);
    // During a rolling upgrade (MEMEX_SEAL_DEFLATE=false) it seals as older versions do; both open everywhere.
    const plain = await Keyring.open(nc, { deflate: false });
    const old = await plain.seal(p, m, prose);
    expect([old[0], old.byteLength]).toEqual([1, prose.byteLength + 29]);
    expect((await ring.open(p, m, old)).equals(prose)).toBe(true);
    expect((await plain.open(p, m, text)).equals(prose)).toBe(true);
    plain.close();
    ring.close();
  });

  it('does not open one memo\'s bytes with another memo\'s key, nor tampered bytes', async () => {
    const ring = await Keyring.open(nc);
    const [m1, m2] = [randomUUID(), randomUUID()];
    await ring.create('p', m1);
    await ring.create('p', m2);
    const sealed = await ring.seal('p', m1, Buffer.from('secret'));
    await expect(ring.open('p', m2, sealed)).rejects.toBeInstanceOf(SealBrokenError);
    // Same memo id under another project: the associated data differs.
    await ring.create('q', m1);
    await expect(ring.open('q', m1, sealed)).rejects.toBeInstanceOf(SealBrokenError);
    const tampered = Buffer.from(sealed);
    tampered[20]! ^= 1;
    await expect(ring.open('p', m1, tampered)).rejects.toBeInstanceOf(SealBrokenError);
    ring.close();
  });

  it('creates and reads keys on its reply inbox, finds none for a memo never keyed or shredded, and keys a shredded memo again only by create', async () => {
    // Who asks JetStream for keys and stores them, seen from another connection.
    const replies: string[] = [];
    const spies = [`$JS.API.DIRECT.GET.KV_${Buckets.memoKeys}.>`, `$KV.${Buckets.memoKeys}.>`].map((subject) =>
      other.subscribe(subject, { callback: (_, msg) => void replies.push(`${msg.subject.startsWith('$KV.') ? 'create' : 'read'} ${msg.reply ?? ''}`) }),
    );
    await other.flush();
    const maker = await Keyring.open(nc);
    const m = randomUUID();
    await maker.create('p', m);
    const sealed = await maker.seal('p', m, Buffer.from('read elsewhere'));
    const reader = await Keyring.open(other);
    expect((await reader.open('p', m, sealed)).toString()).toBe('read elsewhere');
    expect(await reader.has('p', randomUUID())).toBe(false);
    await maker.shred('p', m);
    const late = await Keyring.open(other);
    expect(await late.has('p', m)).toBe(false);
    await expect(late.open('p', m, sealed)).rejects.toBeInstanceOf(KeyErasedError);
    // Keyed again (its subject holds the purge marker, so the first-write publish is refused): a new key.
    await maker.create('p', m);
    const again = await maker.seal('p', m, Buffer.from('a new key'));
    expect((await late.open('p', m, again)).toString()).toBe('a new key');
    await expect(late.open('p', m, sealed)).rejects.toBeInstanceOf(SealBrokenError);
    await other.flush();
    await nc.flush();
    for (const spy of spies) spy.unsubscribe();
    // The first create and the readers' reads went through the shared inbox, not nats.js's request().
    expect(replies.filter((r) => r.startsWith('create _INBOX.memex.')).length).toBeGreaterThanOrEqual(1);
    expect(replies.filter((r) => r.startsWith('read _INBOX.memex.')).length).toBeGreaterThanOrEqual(3);
    for (const r of [maker, reader, late]) r.close();
  });

  it('reads keys through kv.get where the bucket has no direct gets', async () => {
    const bucket = `keys-${randomUUID().slice(0, 8)}`;
    await new Kvm(nc).create(bucket, { history: 1, allow_direct: false });
    expect((await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`)).config.allow_direct).toBe(false);
    const maker = await Keyring.open(nc, { bucket });
    const m = randomUUID();
    await maker.create('p', m);
    const sealed = await maker.seal('p', m, Buffer.from('no direct gets'));
    const reader = await Keyring.open(other, { bucket });
    expect((await reader.open('p', m, sealed)).toString()).toBe('no direct gets');
    expect(await reader.has('p', randomUUID())).toBe(false);
    await maker.shred('p', m);
    const late = await Keyring.open(other, { bucket });
    expect(await late.has('p', m)).toBe(false);
    for (const r of [maker, reader, late]) r.close();
  });

  it('resolves racing creators to one key', async () => {
    const rings = await Promise.all([Keyring.open(nc), Keyring.open(other)]);
    const m = randomUUID();
    await Promise.all(rings.map((r) => r.create('p', m)));
    const sealed = await rings[0]!.seal('p', m, Buffer.from('both read this'));
    expect((await rings[1]!.open('p', m, sealed)).toString()).toBe('both read this');
    for (const r of rings) r.close();
  });

  it('shred makes sealed data unreadable in every process and erases the key bytes from the store files', async () => {
    const ring = await Keyring.open(nc);
    const elsewhere = await Keyring.open(other);
    let shredsSeenElsewhere = 0;
    elsewhere.onShred(() => (shredsSeenElsewhere += 1));
    const m = randomUUID();
    await ring.create('p', m);
    const sealed = await ring.seal('p', m, Buffer.from('to be shredded'));
    // The other process has the key cached.
    expect((await elsewhere.open('p', m, sealed)).toString()).toBe('to be shredded');

    const kv = await new Kvm(nc).open(Buckets.memoKeys);
    const entry = await kv.get(`${Buffer.from('p').toString('base64url')}.${Buffer.from(m).toString('base64url')}`);
    const keyBytes = Buffer.from(entry!.value);
    expect(keyBytes.byteLength).toBe(32);
    await eventually(() => storeHolds(nats.storeDir, keyBytes), 10_000, 100);

    // The tag and chunk ids derived lately (a tag's name is memo data) are dropped too.
    tagId(m, 'a tag of the memo to be shredded');
    expect(derivedIdsHeld()).toBeGreaterThan(0);
    await ring.shred('p', m);
    await expect(ring.open('p', m, sealed)).rejects.toBeInstanceOf(KeyErasedError);
    await eventually(() => derivedIdsHeld() === 0);
    await eventually(async () => {
      await elsewhere.open('p', m, sealed).then(
        () => false,
        (error: unknown) => error instanceof KeyErasedError,
      );
      return (await elsewhere.has('p', m)) === false;
    });
    await expect(elsewhere.open('p', m, sealed)).rejects.toBeInstanceOf(KeyErasedError);
    // …and told whoever keeps memos' plaintext there (the indexer's encoded search texts).
    expect(shredsSeenElsewhere).toBeGreaterThanOrEqual(1);
    expect(await ring.has('p', m)).toBe(false);
    // Shredding again is harmless; erased stays erased.
    await ring.shred('p', m);
    await expect(ring.seal('p', m, Buffer.from('x'))).rejects.toBeInstanceOf(KeyErasedError);
    // On disk: the 32 key bytes are nowhere in the nats-server's store files.
    expect(storeHolds(nats.storeDir, keyBytes)).toBe(false);
    ring.close();
    elsewhere.close();
  });
});
