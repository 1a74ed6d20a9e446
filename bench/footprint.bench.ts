/**
 * Footprint of the stack as `pnpm start` runs it: resident memory of every process (idle, then just
 * after an ingestion; RSS and PSS, which counts pages shared between processes once), and bytes on
 * disk per store per byte of memo text, beside the issue's goals
 * (idle RSS of the whole stack ≤ 600 MB; all stores ≤ 5× the raw text).
 *
 * Memory is read 5 s after ready, then idle (`--idle-seconds`, 65 by default: after V8's idle-time
 * collection), just after the ingestion, and idle again after it.
 *
 *   tsx bench/footprint.bench.ts [--memos 5000] [--chars 1500] [--concurrency 32] [--single-process] [--idle-seconds 65] [--keep DIR]
 *
 * `--keep DIR` copies the stores there before the stack stops, to look into them (sqlite3, nats).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Memo } from '@memex/contracts';
import { startProcessStack, type ProcessStack } from '../test/support/processStack';
import { httpsJson } from '../test/support/https';
import { memoTexts } from './support/memoTexts';
import { pool, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    memos: { type: 'string', default: '5000' },
    chars: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '32' },
    'single-process': { type: 'boolean', default: false },
    'idle-seconds': { type: 'string', default: '65' },
    keep: { type: 'string' },
  },
});
const MEMOS = Number(values.memos);
const CHARS = Number(values.chars);
const MB = 1024 * 1024;
/** How long the stack sits idle before "idle" memory is read. */
const IDLE_MS = Number(values['idle-seconds']) * 1000;


/**
 * A process's proportional set size in bytes: its private pages plus its share of pages mapped by
 * several processes (the Node binary's code, shared libraries), each counted once across them.
 */
function pss(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** Every process under the stack's start script, named by what it runs, with its RSS and PSS in bytes. */
function processes(stack: ProcessStack): { name: string; rss: number; pss: number }[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,rss=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [pid, ppid, rss, ...args] = line.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), rss: Number(rss) * 1024, args: args.join(' ') };
    });
  const under = new Set([stack.process.pid!]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (under.has(p.ppid) && !under.has(p.pid)) {
        under.add(p.pid);
        grew = true;
      }
    }
  }
  return table
    .filter((p) => under.has(p.pid))
    .map((p) => {
      const bundle = /([\w-]+)\.mjs/.exec(p.args)?.[1];
      const name = p.pid === stack.process.pid ? 'start script' : p.args.includes('nats-server') ? 'nats-server' : bundle ?? p.args.slice(0, 40);
      return { name, rss: p.rss, pss: pss(p.pid) };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * RSS and PSS per process, and both summed. Summed RSS counts the pages every Node process shares
 * (the binary's code, ~45 MiB) once per process; summed PSS counts them once: what the stack takes.
 */
function rssRows(list: { name: string; rss: number; pss: number }[]): [string, string][] {
  const rss = list.reduce((s, p) => s + p.rss, 0);
  const shared = list.reduce((s, p) => s + p.pss, 0);
  return [
    ...list.map((p): [string, string] => [p.name, `RSS ${(p.rss / MB).toFixed(0)} MiB, PSS ${(p.pss / MB).toFixed(0)} MiB`]),
    ['all', `RSS ${(rss / MB).toFixed(0)} MiB (${((rss / 1e6)).toFixed(0)} MB), PSS ${(shared / MB).toFixed(0)} MiB (goal ≤ 600 MB idle)`],
  ];
}

/** Every file under `dir` with its size on disk. */
function files(dir: string): { file: string; bytes: number }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return files(full);
    return entry.isFile() ? [{ file: full, bytes: statSync(full).blocks * 512 }] : [];
  });
}

function du(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += du(full);
    else if (entry.isFile()) total += statSync(full).blocks * 512;
  }
  return total;
}

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0' }, values['single-process'] ? ['--single-process'] : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  await sleep(5_000);
  printTable('resident memory, 5 s after ready (startup garbage not yet collected)', rssRows(processes(stack)));
  // V8 collects what starting left behind (parsed model files, compiled schemas) once a process has
  // been idle a while (its memory reducer: ~15-60 s here); what stays is what an idle stack holds.
  await sleep(IDLE_MS - 5_000);
  printTable(`resident memory, idle (${IDLE_MS / 1000} s after ready)`, rssRows(processes(stack)));

  const texts = memoTexts(MEMOS, CHARS);
  const textBytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0);
  const call = <T>(method: string, url: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${url}`, { key: stack.key, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  const ids = await pool(
    texts.map((content, i) => async () => {
      const res = await call<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `Memo ${i}`, content });
      if (res.status !== 200) throw new Error(`POST failed: ${res.status} ${res.text}`);
      return res.body.memo_uuid;
    }),
    Number(values.concurrency),
  );
  for (const id of ids) {
    for (;;) {
      const res = await call<Memo>('GET', `/api/v1/memo/${id}`);
      if (res.status === 200 && !res.body.pending) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  printTable(`resident memory just after ingesting ${MEMOS} memos`, rssRows(processes(stack)));

  // Let WAL checkpoints and JetStream flushes settle, as an idle stack would.
  await sleep(5_000);
  const stores = readdirSync(stack.dataDir, { withFileTypes: true }).filter((e) => e.isDirectory());
  const rows: [string, string][] = stores.map((e) => {
    const bytes = du(path.join(stack.dataDir, e.name));
    return [e.name, `${(bytes / MB).toFixed(1)} MiB, ${(bytes / textBytes).toFixed(2)}× the text`];
  });
  const all = du(stack.dataDir);
  rows.push(['all stores', `${(all / MB).toFixed(1)} MiB, ${(all / textBytes).toFixed(2)}× the text (goal ≤ 5×)`]);
  printTable(`disk after ${MEMOS} memos, ${(textBytes / MB).toFixed(1)} MiB of memo text`, rows);
  const largest = files(stack.dataDir).sort((a, b) => b.bytes - a.bytes).slice(0, 10);
  printTable('largest files', largest.map((f): [string, string] => [path.relative(stack.dataDir, f.file), `${(f.bytes / MB).toFixed(1)} MiB`]));
  if (values.keep) cpSync(stack.dataDir, values.keep, { recursive: true });
  await sleep(IDLE_MS - 5_000);
  printTable(`resident memory, idle again (${IDLE_MS / 1000} s after the ingestion)`, rssRows(processes(stack)));
} finally {
  const code = await stack.stop();
  if (code !== 0) console.error(stack.output());
}
