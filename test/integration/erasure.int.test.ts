/**
 * A delete erases: after DELETE (and after expiry) no plaintext of the memo is left in any file under
 * the data dir or the nats-server's store within 60 s, while every other memo still reads, searches
 * and survives a re-index by replay. Scans raw bytes of every file, WAL and JetStream blocks included,
 * and what SQLite files hold deflated (every BLOB, inflated). Runs with the compact forms stores write
 * by default and with the older ones (`MEMEX_SEAL_DEFLATE=false`), where more is plaintext on disk.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, SearchResultItem } from '@memex/contracts';
import { IndexStateStore } from '@memex/runtime';
import { eventually, tempDir } from '@memex/testing';
import { runTs } from '../support/processes';
import { REPO_ROOT, startStack, type Stack } from '../support/stack';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    try {
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    } catch {
      return []; // removed while we looked
    }
  });
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Every BLOB of every table of a SQLite file that inflates (stores keep text deflated), inflated. */
function inflatedBlobs(file: string): Buffer[] {
  const out: Buffer[] = [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    for (const table of tables) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).raw().iterate() as Iterable<unknown[]>) {
        for (const value of row) {
          if (!Buffer.isBuffer(value)) continue;
          try {
            out.push(inflateRawSync(value));
          } catch {
            // not deflated (vectors, term lists)
          }
        }
      }
    }
  } finally {
    db.close();
  }
  return out;
}

/** Which of `needles` occur in any file under `dirs` (raw bytes, UTF-8, and SQLite's deflated BLOBs), and where. */
function findOnDisk(dirs: string[], needles: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const patterns = needles.map((n) => [n, Buffer.from(n, 'utf8')] as const);
  for (const file of dirs.flatMap(filesUnder)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      continue;
    }
    const views = [bytes];
    if (bytes.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER)) views.push(...inflatedBlobs(file));
    for (const [needle, pattern] of patterns) {
      if (views.some((view) => view.includes(pattern))) found.set(needle, [...(found.get(needle) ?? []), file]);
    }
  }
  return found;
}

/** Lower-case letters and digits, ending in a digit: no tokenizer or stemmer changes it. */
const marker = (label: string) => `zq${label}${randomBytes(6).toString('hex')}7`;

interface Markers {
  title: string;
  content: string;
  metaKey: string;
  metaValue: string;
  tag: string;
  reference: string;
  source: string;
}

const markersFor = (who: string): Markers => ({
  title: marker(`${who}title`),
  content: marker(`${who}content`),
  metaKey: marker(`${who}metakey`),
  metaValue: marker(`${who}metavalue`),
  tag: marker(`${who}tag`),
  reference: marker(`${who}ref`),
  source: marker(`${who}src`),
});

describe.each([
  ['compact forms (the default)', 'true'],
  ['older forms (MEMEX_SEAL_DEFLATE=false)', 'false'],
])('erasure on disk, %s', (_forms, compact) => {
  let stack: Stack;
  let models: ReturnType<typeof tempDir>;
  let headers: Record<string, string>;
  const figures: Record<string, number> = {};

  beforeAll(async () => {
    // Two names for the built model, so a re-index (replay of the whole log) can be asked for.
    models = tempDir('memex-models-');
    mkdirSync(models.path, { recursive: true });
    symlinkSync(join(REPO_ROOT, 'models', 'memex-glove-100d'), join(models.path, 'memex-glove-100d'));
    symlinkSync(join(REPO_ROOT, 'models', 'memex-glove-100d'), join(models.path, 'glove-alias'));
    stack = await startStack({
      env: { MEMEX_MODELS_DIR: models.path, MEMEX_RATE_LIMIT: '0', MEMEX_CONSISTENCY_TIMEOUT_MS: '5000', MEMEX_SEAL_DEFLATE: compact },
    });
    const { key } = await stack.project();
    headers = { authorization: `Bearer ${key}` };
  }, 60_000);

  afterAll(async () => {
    console.info(`[erasure, ${compact === 'true' ? 'compact' : 'older'} forms] ${JSON.stringify(figures)}`);
    await stack?.stop();
    models?.remove();
  });

  const dirs = () => [stack.dataDir, stack.nats.storeDir];
  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    stack.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const search = async (query: string) =>
    ((await inject('POST', '/api/v1/search', { query, search_method: 'chunk_vector_search', limit: 10 })).json().results as SearchResultItem[]).map(
      (h) => h.memo_uuid,
    );

  async function createMemo(m: Markers, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await inject('POST', '/api/v1/memo', {
      title: `Notes ${m.title}`,
      content: `The harbour log mentions ${m.content} twice. Later the keeper wrote about ${m.content} and the tide.`,
      metadata: { [m.metaKey]: m.metaValue, nested: { deep: [m.metaValue] } },
      tags: [m.tag],
      reference_id: m.reference,
      source: m.source,
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().memo_uuid as string;
    await eventually(async () => !((await inject('GET', `/api/v1/memo/${id}`)).json() as Memo).pending, 20_000);
    // A content PATCH too: an older revision must go as well.
    return id;
  }

  async function erasedWithin(needles: string[], label: string, started: number): Promise<void> {
    const left = await eventually(
      () => {
        const found = findOnDisk(dirs(), needles);
        return found.size === 0 ? true : undefined;
      },
      60_000,
      250,
    ).catch(() => findOnDisk(dirs(), needles));
    if (left !== true) throw new Error(`${label}: plaintext still on disk after 60 s: ${JSON.stringify([...(left as Map<string, string[]>)])}`);
    figures[`${label}: to no plaintext on disk, ms`] = Math.round(performance.now() - started);
  }

  it('leaves no plaintext of a deleted or expired memo on disk, and every other memo keeps working', async () => {
    const doomed = markersFor('del');
    const expiring = markersFor('exp');
    const kept = markersFor('keep');
    const doomedId = await createMemo(doomed);
    // An update with content: the first revision's text must go too.
    const patched = await inject('PATCH', `/api/v1/memo/${doomedId}`, {
      content: `Revised: ${doomed.content} is still in the harbour log.`,
      title: `Notes revised ${doomed.title}`,
    });
    expect(patched.statusCode, patched.body).toBe(200);
    await eventually(async () => !((await inject('GET', `/api/v1/memo/${doomedId}`)).json() as Memo).pending, 20_000);
    const keptId = await createMemo(kept);
    // Older forms write the found tags in a MemoTagged of their own; compact ones inside MemoSummarized.
    const history = (await inject('GET', `/api/v1/memo/${keptId}/history`)).json() as { revisions: { event: string }[] };
    expect(history.revisions.map((r) => r.event).includes('MemoTagged')).toBe(compact === 'false');
    const expiringId = await createMemo(expiring, { expiration_date: new Date(Date.now() + 6_000).toISOString() });

    // Before: everything is findable, and the scan does see plaintext (the read model and index hold it).
    expect(await search(doomed.content)).toContain(doomedId);
    expect(await search(kept.content)).toContain(keptId);
    expect(await search(expiring.content)).toContain(expiringId);
    const before = findOnDisk(dirs(), [doomed.title, doomed.content, kept.title, expiring.title]);
    expect([...before.keys()].sort()).toEqual([doomed.title, doomed.content, kept.title, expiring.title].sort());

    // DELETE, then scan until nothing of the memo is left.
    const deletedAt = performance.now();
    const del = await inject('DELETE', `/api/v1/memo/${doomedId}`);
    expect(del.statusCode).toBe(204);
    await erasedWithin(Object.values(doomed), 'DELETE', deletedAt);
    expect((await inject('GET', `/api/v1/memo/${doomedId}`)).statusCode).toBe(404);
    expect(await search(doomed.content)).not.toContain(doomedId);

    // Expiry erases the same way.
    const expiredAt = performance.now();
    await eventually(async () => (await inject('GET', `/api/v1/memo/${expiringId}`)).statusCode === 404, 30_000, 200);
    await erasedWithin(Object.values(expiring), 'expiry', expiredAt);

    // The other memo: on disk where stores keep plaintext, and fully working through the API.
    expect(findOnDisk(dirs(), [kept.title, kept.content]).size).toBe(2);
    const memo = (await inject('GET', `/api/v1/memo/${keptId}`)).json() as Memo;
    expect(memo.content).toContain(kept.content);
    expect(memo.metadata).toEqual({ [kept.metaKey]: kept.metaValue, nested: { deep: [kept.metaValue] } });
    expect(memo.tags.map((t) => t.tag)).toContain(kept.tag);
    expect(await search(kept.content)).toContain(keptId);

    // Re-index by replay of the whole event log (sealed events, erased memos' ones unreadable).
    const cli = await runTs('packages/cli/src/main.ts', ['reindex', '--model', 'glove-alias'], stack.env);
    expect(cli.code, cli.stderr).toBe(0);
    const store = await IndexStateStore.open(stack.nc);
    await eventually(async () => {
      const { state } = await store.read();
      return state?.activeModel === 'glove-alias' && !state.reindex;
    }, 60_000, 200);
    expect(await search(kept.content)).toEqual([keptId]);
    expect(await search(doomed.content)).not.toContain(doomedId);
    // Nothing of the erased memos came back with the replay.
    expect(findOnDisk(dirs(), [...Object.values(doomed), ...Object.values(expiring)]).size).toBe(0);
  }, 240_000);

  it('erases a memo created in a batch as it erases one created alone, its batch neighbours untouched', async () => {
    const doomed = markersFor('bdel');
    const kept = markersFor('bkeep');
    const body = (m: Markers) => ({
      title: `Notes ${m.title}`,
      content: `The harbour log mentions ${m.content} twice. Later the keeper wrote about ${m.content} and the tide.`,
      metadata: { [m.metaKey]: m.metaValue },
      tags: [m.tag],
      reference_id: m.reference,
      source: m.source,
    });
    const res = await inject('POST', '/api/v1/memo/batch', { memos: [body(kept), body(doomed), { title: 'Filler', content: 'A third memo of the same batch.' }] });
    expect(res.statusCode, res.body).toBe(200);
    const [keptId, doomedId] = (res.json().results as { memo_uuid: string }[]).map((r) => r.memo_uuid);
    for (const id of [keptId, doomedId]) await eventually(async () => !((await inject('GET', `/api/v1/memo/${id}`)).json() as Memo).pending, 30_000);
    expect(findOnDisk(dirs(), [doomed.title, doomed.content]).size).toBe(2);

    const deletedAt = performance.now();
    expect((await inject('DELETE', `/api/v1/memo/${doomedId}`)).statusCode).toBe(204);
    await erasedWithin(Object.values(doomed), 'DELETE of a batch memo', deletedAt);
    expect((await inject('GET', `/api/v1/memo/${doomedId}`)).statusCode).toBe(404);
    expect((await inject('GET', `/api/v1/memo/${doomed.reference}?id_type=reference_id`)).statusCode).toBe(404);
    expect(await search(doomed.content)).not.toContain(doomedId);
    const memo = (await inject('GET', `/api/v1/memo/${keptId}`)).json() as Memo;
    expect(memo.content).toContain(kept.content);
    expect(await search(kept.content)).toContain(keptId);
  }, 120_000);
});
