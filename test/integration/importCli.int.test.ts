/**
 * `memex import` as a user runs it: the CLI as its own process over HTTPS against the stack (with
 * the extractor, for documents). NDJSON with bad lines, a folder of real files made by pandoc and
 * Chromium, a run killed with SIGKILL and resumed, and a batch sent whose answer was lost.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadExtractorConfig, startExtractorService, type ExtractorService } from '@memex/extractor';
import { generateDocument, missingTools, sampleDocument } from '@memex/extractor/testing/documents';
import { silentLogger } from '@memex/runtime';
import { eventually } from '@memex/testing';
import { httpsJson } from '../support/https';
import { listenHttps } from '../support/httpsListener';
import { exited, runTs, spawnTs } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

interface Summary {
  type: 'summary';
  total: number;
  created: number;
  skipped: number;
  refused: { line?: number; path?: string; status: number; error: string }[];
  processed?: number;
  failed?: unknown[];
  manifest: string;
}

const missing = missingTools();

// Each CLI call is a Node process with tsx: seconds apiece on a busy machine.
describe('memex import, over HTTPS', { timeout: 300_000 }, () => {
  let stack: Stack;
  let extractor: ExtractorService;
  let https: { url: string; ca: string; close(): Promise<void> };
  let dir: string;

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '0' } });
    extractor = await startExtractorService(loadExtractorConfig(stack.env), { logger: silentLogger() });
    https = await listenHttps(stack.app, stack.dataDir);
    dir = mkdtempSync(join(tmpdir(), 'memex-import-'));
  }, 120_000);
  afterAll(async () => {
    await https?.close();
    await extractor?.stop();
    await stack?.stop();
  });

  const envFor = (key: string) => ({ MEMEX_URL: https.url, MEMEX_DATA_DIR: stack.dataDir, MEMEX_API_KEY: key });
  const memex = (key: string, ...args: string[]) => runTs('packages/cli/src/main.ts', ['import', ...args], envFor(key));
  const jsonLines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string } & Record<string, unknown>);
  const summaryOf = (stdout: string) => jsonLines(stdout).at(-1) as unknown as Summary;

  /** Every memo of the project by its reference id (or title), through the list and the memo reads. */
  async function memos(key: string): Promise<{ uuid: string; client_reference_id: string | null; title: string }[]> {
    const all: { uuid: string; client_reference_id: string | null; title: string }[] = [];
    for (let page = 1; ; page++) {
      const res = await httpsJson<{ results: { uuid: string; client_reference_id: string | null; title: string }[]; total_pages: number }>('GET', `${https.url}/api/v1/memo?page=${page}&page_size=100`, { ca: https.ca, key });
      expect(res.status, res.text).toBe(200);
      all.push(...res.body.results);
      if (page >= res.body.total_pages) return all;
    }
  }

  const ndjson = (name: string, lines: string[]) => {
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  const memoLine = (i: number, prefix: string) => JSON.stringify({ title: `${prefix} ${i}`, content: `The ${prefix} note number ${i} is about tides and harbours.`, reference_id: `${prefix}-${i}` });

  it('imports NDJSON through the batch route, refusing bad lines with their line numbers, and waits for processing', async () => {
    const { key } = await stack.project('import-ndjson');
    const file = ndjson('mixed.ndjson', [
      memoLine(1, 'mixed'),
      '{"title": "cut short", "content": ',
      memoLine(2, 'mixed'),
      '',
      '[1, 2]',
      JSON.stringify({ content: 'no title here' }),
      memoLine(3, 'mixed'),
      JSON.stringify({ title: 'again', content: 'Same reference id as line 1.', reference_id: 'mixed-1' }),
      memoLine(4, 'mixed'),
    ]);
    const run = await memex(key, file, '--json', '--batch_size', '3', '--concurrency', '1', '--wait');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toContain('no batch route');
    const lines = jsonLines(run.stdout);
    expect(lines.slice(0, -1).every((l) => l.type === 'progress')).toBe(true);
    expect(lines.some((l) => l.type === 'progress' && l.phase === 'wait' && l.done === 4 && l.total === 4)).toBe(true);
    const summary = summaryOf(run.stdout);
    expect(summary).toMatchObject({ type: 'summary', total: 8, created: 4, skipped: 0, processed: 4, failed: [] });
    expect(summary.refused.map((r) => [r.line, r.status])).toEqual([
      [2, 400],
      [5, 400],
      [6, summary.refused[2]!.status],
      [8, 409],
    ]);
    expect(summary.refused[0]!.error).toBe('Request body is not valid JSON');
    expect(summary.refused[2]!.status).toBeGreaterThanOrEqual(400);
    expect(summary.refused[2]!.error).toBe('Title is required');
    expect(summary.refused[3]!.error).toBe('reference_id is already used by another memo in this project');
    const stored = await memos(key);
    expect(stored.map((m) => m.client_reference_id).sort()).toEqual(['mixed-1', 'mixed-2', 'mixed-3', 'mixed-4']);

    // Without --json and off a terminal: plain progress lines on stderr, a summary naming the refused lines.
    const again = await memex(key, file, '--resume');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/imported 8\/8 {2}\d+ memos\/s {2}ETA/);
    expect(again.stdout).toContain('8 items');
    expect(again.stdout).toContain('0 created, 4 created by an earlier run, 4 refused');
    expect(again.stdout).toContain('line 2: 400 Request body is not valid JSON');
    expect((await memos(key)).length).toBe(4);

    const refusedAgain = await memex(key, file);
    expect(refusedAgain.code).toBe(1);
    expect(refusedAgain.stderr).toContain('an import manifest exists');
  });

  it('resumes a run killed with SIGKILL and creates nothing twice', async () => {
    const { key } = await stack.project('import-resume');
    const count = 300;
    const file = ndjson('resume.ndjson', Array.from({ length: count }, (_, i) => memoLine(i, 'resume')));
    const manifest = `${file}.memex-import`;
    const child = spawnTs('packages/cli/src/main.ts', ['import', file, '--batch_size', '5', '--concurrency', '2'], envFor(key));
    const outcomes = () => readFileSync(manifest, 'utf8').split('\n').filter((l) => l.includes('"memo_uuid"')).length;
    await eventually(() => { try { return outcomes() >= 40 || undefined; } catch { return undefined; } }, 60_000, 20);
    child.kill('SIGKILL');
    await exited(child);
    const before = outcomes();
    expect(before).toBeLessThan(count);

    const resumed = await memex(key, file, '--resume', '--json', '--concurrency', '4');
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = summaryOf(resumed.stdout);
    expect(summary.skipped).toBe(before);
    expect(summary.skipped + summary.created).toBe(count);
    const stored = await memos(key);
    expect(stored.length).toBe(count);
    expect(new Set(stored.map((m) => m.client_reference_id)).size).toBe(count);
  });

  it('sends a batch whose answer was lost again under its key: the server answers the memos it made', async () => {
    const { key } = await stack.project('import-lost');
    const file = ndjson('lost.ndjson', Array.from({ length: 6 }, (_, i) => JSON.stringify({ title: `Lost ${i}`, content: `Untagged note ${i} about lighthouses.` })));
    const first = await memex(key, file, '--json', '--batch_size', '4');
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first.stdout)).toMatchObject({ created: 6 });
    const ids = (await memos(key)).map((m) => m.uuid).sort();
    // As if the run had died after sending its first batch (lines 1-4) and before recording the answer.
    const manifest = `${file}.memex-import`;
    const kept = readFileSync(manifest, 'utf8').split('\n').filter((l) => !/"item":"line:[1-4]"/.test(l));
    writeFileSync(manifest, kept.join('\n'));
    const resumed = await memex(key, file, '--resume', '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(summaryOf(resumed.stdout)).toMatchObject({ total: 6, skipped: 2, created: 4, refused: [] });
    expect((await memos(key)).map((m) => m.uuid).sort()).toEqual(ids);
  });

  it.skipIf(missing)(`uploads a folder of real documents one by one, refusing what the server cannot read${missing ? ` (skipped: ${missing})` : ''}`, async () => {
    const { key } = await stack.project('import-folder');
    const folder = join(dir, 'reports');
    mkdirSync(join(folder, 'nested'), { recursive: true });
    writeFileSync(join(folder, 'survey.pdf'), await generateDocument('pdf', sampleDocument('osprey')));
    writeFileSync(join(folder, 'nested', 'notes.docx'), await generateDocument('docx', sampleDocument('heron')));
    writeFileSync(join(folder, 'readme.md'), '# Readme\n\nThe dunlin readme explains the folder.\n');
    writeFileSync(join(folder, 'photo.bin'), Buffer.from([0x00, 0x9f, 0x92, 0x96, 0xff, 0x00, 0x01]));
    writeFileSync(join(folder, '.DS_Store'), 'hidden');
    const run = await memex(key, folder, '--json', '--wait', '--concurrency', '2');
    expect(run.code, run.stderr).toBe(1);
    const summary = summaryOf(run.stdout);
    expect(summary).toMatchObject({ total: 4, created: 3, processed: 3, failed: [] });
    expect(summary.refused).toEqual([{ path: 'photo.bin', status: 415, error: expect.stringContaining('Unsupported file type') as unknown }]);
    expect((await memos(key)).map((m) => m.title).sort()).toEqual(['notes.docx', 'readme.md', 'survey.pdf']);
    const hits = await httpsJson<{ results: { memo_title: string }[] }>('POST', `${https.url}/api/v1/search`, {
      ca: https.ca,
      key,
      body: { query: 'osprey survey measured glacier retreat', search_method: 'chunk_vector_search', limit: 3 },
    });
    expect(hits.body.results[0]?.memo_title).toBe('survey.pdf');
  });
});

describe('memex import under the project rate limit', { timeout: 300_000 }, () => {
  let stack: Stack;
  let https: { url: string; ca: string; close(): Promise<void> };

  beforeAll(async () => {
    stack = await startStack({ env: { MEMEX_RATE_LIMIT: '20', MEMEX_RATE_LIMIT_WINDOW_MS: '1000' } });
    https = await listenHttps(stack.app, stack.dataDir);
  }, 120_000);
  afterAll(async () => {
    await https?.close();
    await stack?.stop();
  });

  /** The project's memo count as the list gives it (one more request: it may wait for the next window). */
  const listedCount = async (key: string): Promise<number> => {
    const listed = await eventually(async () => {
      const res = await httpsJson<{ count: number }>('GET', `${https.url}/api/v1/memo?page_size=1`, { ca: https.ca, key });
      return res.status === 200 ? res : undefined;
    }, 10_000, 250);
    return listed.body.count;
  };

  it('waits out 429s as Retry-After says and creates every memo once', async () => {
    const { key } = await stack.project('import-limited');
    const dir = mkdtempSync(join(tmpdir(), 'memex-import-limit-'));
    const file = join(dir, 'limited.ndjson');
    writeFileSync(file, Array.from({ length: 80 }, (_, i) => JSON.stringify({ title: `Limited ${i}`, content: `Rate limited note ${i}.`, reference_id: `limited-${i}` })).join('\n'));
    const run = await runTs('packages/cli/src/main.ts', ['import', file, '--json', '--batch_size', '10', '--concurrency', '4'], { MEMEX_URL: https.url, MEMEX_DATA_DIR: stack.dataDir, MEMEX_API_KEY: key });
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Summary;
    expect(summary).toMatchObject({ total: 80, created: 80, refused: [] });
    // The waits were reported as they happened, not as a silent stall.
    const progress = run.stdout.trim().split('\n').slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(progress.some((p) => p.type === 'progress' && p.retry_status === 429 && typeof p.retry_in_s === 'number')).toBe(true);
    // 80 memos at 20 a second: at least three windows went by.
    expect((summary as unknown as { seconds: number }).seconds).toBeGreaterThanOrEqual(3);
    expect(await listedCount(key)).toBe(80);
  });

  it('splits a batch larger than the whole rate limit (413) until it fits, and creates every memo once', async () => {
    const { key } = await stack.project('import-oversized');
    const dir = mkdtempSync(join(tmpdir(), 'memex-import-oversized-'));
    const file = join(dir, 'oversized.ndjson');
    writeFileSync(file, Array.from({ length: 60 }, (_, i) => JSON.stringify({ title: `Oversized ${i}`, content: `Oversized batch note ${i}.`, reference_id: `oversized-${i}` })).join('\n'));
    // More memos than the whole limit: no wait would let them through, so 413 naming the size that goes.
    const never = await httpsJson('POST', `${https.url}/api/v1/memo/batch`, { ca: https.ca, key, body: { memos: Array.from({ length: 21 }, (_, i) => ({ title: `Never ${i}`, content: 'short' })) } });
    expect({ status: never.status, body: never.body }).toEqual({
      status: 413,
      body: { error: 'The batch holds more memos than the rate limit allows in one window: send at most 20 memos per batch' },
    });
    expect(never.headers['retry-after']).toBeUndefined();
    // 60 memos in one batch against a limit of 20 a window: refused whole, then sent as halves of halves.
    const run = await runTs('packages/cli/src/main.ts', ['import', file, '--json', '--batch_size', '60', '--concurrency', '1'], { MEMEX_URL: https.url, MEMEX_DATA_DIR: stack.dataDir, MEMEX_API_KEY: key });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Summary).toMatchObject({ total: 60, created: 60, refused: [] });
    expect(await listedCount(key)).toBe(60);
  });

  it('stops on Ctrl-C with a summary and exit 130; --resume creates the rest once', async () => {
    const { key } = await stack.project('import-interrupted');
    const dir = mkdtempSync(join(tmpdir(), 'memex-import-sigint-'));
    const file = join(dir, 'interrupted.ndjson');
    writeFileSync(file, Array.from({ length: 80 }, (_, i) => JSON.stringify({ title: `Stopped ${i}`, content: `Interrupted note ${i}.`, reference_id: `stopped-${i}` })).join('\n'));
    const env = { MEMEX_URL: https.url, MEMEX_DATA_DIR: stack.dataDir, MEMEX_API_KEY: key };
    const child = spawnTs('packages/cli/src/main.ts', ['import', file, '--json', '--batch_size', '10', '--concurrency', '2'], env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    // Once some memos are in (the rest wait for the next windows), Ctrl-C.
    await eventually(() => (/"done":[1-9]/.test(stdout) ? true : undefined), 60_000, 20);
    child.kill('SIGINT');
    expect(await exited(child)).toBe(130);
    expect(stderr).toContain('memex: import stopped: interrupted (Ctrl-C)');
    const stopped = JSON.parse(stdout.trim().split('\n').at(-1)!) as Summary & { error: string };
    expect(stopped).toMatchObject({ type: 'summary', total: 80, error: 'interrupted (Ctrl-C)' });
    expect(stopped.created).toBeLessThan(80);

    const resumed = await runTs('packages/cli/src/main.ts', ['import', file, '--resume', '--json', '--batch_size', '10'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain('MaxListenersExceededWarning');
    const summary = JSON.parse(resumed.stdout.trim().split('\n').at(-1)!) as Summary;
    expect(summary.skipped).toBeGreaterThanOrEqual(stopped.created);
    expect(summary.skipped + summary.created).toBe(80);
    expect(await listedCount(key)).toBe(80);
  });
});
