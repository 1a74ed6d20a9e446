/**
 * Document extraction: MB/s and pages/s per format (in-process parse, and through a warm sandbox
 * process), and end-to-end upload → `processed` latency through the stack (gateway, blob store,
 * extractor, indexer, agent in one process over a private nats-server).
 *
 *   tsx bench/extract.bench.ts [--sections 40] [--runs 5] [--uploads 2]
 *
 * Documents are made by pandoc (DOCX, PPTX, ODT, HTML), headless Chromium (PDF from the HTML) and
 * exceljs (XLSX, one row per table row), from one generated Markdown text of `sections` sections.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadExtractorConfig, startExtractorService, DEFAULT_EXTRACT_LIMITS, SandboxPool, extractDocument } from '@memex/extractor';
import { CHROMIUM, GENERATED_EXTENSIONS, missingTools, xlsxWorkbook, type GeneratedFormat } from '@memex/extractor/testing/documents';
import { silentLogger } from '@memex/runtime';
import { eventually } from '@memex/testing';
import { startStack } from '../test/support/stack';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({
  options: { sections: { type: 'string', default: '40' }, runs: { type: 'string', default: '5' }, uploads: { type: 'string', default: '2' } },
});
const SECTIONS = Number(values.sections);
const RUNS = Number(values.runs);
const UPLOADS = Number(values.uploads);

const missing = missingTools();
if (missing) {
  console.log(`extract bench needs pandoc and Chromium: ${missing}`);
  process.exit(0);
}

const WORDS = 'glacier ridge station survey reading season ice melt snow valley moraine crevasse summit slope basin river'.split(' ');
function sentence(i: number): string {
  const words = Array.from({ length: 14 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]);
  return `${words.join(' ').replace(/^./, (c) => c.toUpperCase())} ${i}.`;
}

function markdown(sections: number): string {
  const out: string[] = ['# Survey report', ''];
  let n = 0;
  for (let s = 1; s <= sections; s++) {
    out.push(`## Section ${s}`, '');
    for (let p = 0; p < 3; p++) out.push(Array.from({ length: 5 }, () => sentence(n++)).join(' '), '');
    out.push('| Station | Reading | Note |', '|---|---|---|');
    for (let r = 0; r < 5; r++) out.push(`| S${s}-${r} | ${(s * 31 + r * 7) % 1000} | ${WORDS[(s + r) % WORDS.length]} |`);
    out.push('');
  }
  return out.join('\n');
}

async function generate(dir: string, md: string): Promise<Map<GeneratedFormat, Buffer>> {
  const files = new Map<GeneratedFormat, Buffer>();
  const src = join(dir, 'src.md');
  writeFileSync(src, md);
  files.set('markdown', Buffer.from(md));
  files.set('text', Buffer.from(md.replace(/[#|]/g, ' ')));
  for (const format of ['docx', 'pptx', 'odt'] as const) {
    execFileSync('pandoc', [src, '-o', join(dir, `out.${format}`)]);
    files.set(format, readFileSync(join(dir, `out.${format}`)));
  }
  execFileSync('pandoc', [src, '-s', '--metadata', 'title=Survey', '-o', join(dir, 'out.html')]);
  files.set('html', readFileSync(join(dir, 'out.html')));
  execFileSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(dir, 'p')}`, `--print-to-pdf=${join(dir, 'out.pdf')}`, join(dir, 'out.html')], {
    stdio: 'ignore',
  });
  files.set('pdf', readFileSync(join(dir, 'out.pdf')));
  const sheets = Array.from({ length: Math.min(SECTIONS, 20) }, (_, i) => ({
    name: `Section ${i + 1}`,
    rows: [['Station', 'Reading', 'Note'], ...Array.from({ length: 50 }, (_, r) => [`S${i + 1}-${r}`, ((i + 1) * 31 + r * 7) % 1000, sentence((i + 1) * 50 + r)])],
  }));
  files.set('xlsx', await xlsxWorkbook(sheets));
  return files;
}

const dir = mkdtempSync(join(tmpdir(), 'memex-bench-extract-'));
const files = await generate(dir, markdown(SECTIONS));
const FORMATS = [...files.keys()];
const limits = { ...DEFAULT_EXTRACT_LIMITS, maxTextBytes: 64 * 1024 * 1024 };

const rows: [string, string][] = [];
const pool = new SandboxPool({ ...limits, timeoutMs: 120_000, maxMemoryMb: 1024 }, { size: 1 });
await pool.warm();
for (const format of FORMATS) {
  const bytes = files.get(format)!;
  const times: number[] = [];
  const sandboxed: number[] = [];
  let pages = 1;
  let chars = 0;
  for (let w = 0; w < 3; w++) await extractDocument(bytes, format, limits); // warm the parser's code (JIT)
  for (let r = 0; r < RUNS; r++) {
    let t = performance.now();
    const out = await extractDocument(bytes, format, limits);
    times.push((performance.now() - t) / 1000);
    pages = out.pages;
    chars = out.text.length;
    t = performance.now();
    await pool.extract(bytes, format);
    sandboxed.push((performance.now() - t) / 1000);
  }
  const s = percentile(times, 50);
  const sb = percentile(sandboxed, 50);
  const mb = bytes.length / 1024 / 1024;
  rows.push([
    format.padEnd(8),
    `${(bytes.length / 1024).toFixed(0).padStart(6)} KB  ${String(pages).padStart(3)} pages  ${String(chars).padStart(7)} chars  ` +
      `in-process ${(s * 1000).toFixed(0).padStart(5)} ms = ${(mb / s).toFixed(2).padStart(6)} MB/s ${(pages / s).toFixed(1).padStart(7)} pages/s  ` +
      `sandboxed ${(sb * 1000).toFixed(0).padStart(5)} ms = ${(mb / sb).toFixed(2).padStart(6)} MB/s ${(pages / sb).toFixed(1).padStart(7)} pages/s`,
  ]);
}
await pool.close();
printTable(`extraction throughput (median of ${RUNS}; pages: PDF pages, slides, sheets, 1 for flowing text)`, rows);

// End to end: upload → status processed, through the whole stack.
const stack = await startStack({ env: { EXTRACT_CONCURRENCY: '2' } });
const extractor = await startExtractorService(loadExtractorConfig(stack.env), { logger: silentLogger() });
const { key } = await stack.project('bench');
const headers = { authorization: `Bearer ${key}` };
const latencies: number[] = [];
const perFormat: [string, string][] = [];
for (const format of FORMATS) {
  const mine: number[] = [];
  for (let u = 0; u < UPLOADS; u++) {
    const boundary = `----bench${u}`;
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="report.${GENERATED_EXTENSIONS[format as GeneratedFormat]}"\r\n\r\n`),
      files.get(format)!,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const started = performance.now();
    const res = await stack.app.inject({ method: 'POST', url: '/api/v1/memo', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    if (res.statusCode !== 200) throw new Error(`upload failed: ${res.statusCode} ${res.body}`);
    const id = res.json().memo_uuid as string;
    const status = await eventually(async () => {
      const s = (await stack.app.inject({ method: 'GET', url: `/api/v1/memo/${id}/status`, headers })).json();
      return s.status === 'processing' ? undefined : s;
    }, 300_000, 20);
    if (status.status !== 'processed') throw new Error(`${format}: ${JSON.stringify(status)}`);
    const ms = performance.now() - started;
    mine.push(ms);
    latencies.push(ms);
  }
  perFormat.push([format, `p50 ${percentile(mine, 50).toFixed(0)} ms, max ${Math.max(...mine).toFixed(0)} ms`]);
}
printTable(`upload → processed latency (${UPLOADS} sequential uploads per format)`, [
  ...perFormat,
  ['all', `p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms`],
]);
await extractor.stop();
await stack.stop();
rmSync(dir, { recursive: true, force: true });
