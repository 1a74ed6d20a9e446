import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DocumentFormat } from '@memex/contracts';
import { ExtractionError, type ExtractLimits } from '../extract/errors';
import type { Extracted } from '../extract/extract';
import type { SandboxReply, SandboxRequest } from './child';

export interface SandboxLimits extends ExtractLimits {
  /** Wall-clock time for one document, parsing included; the child is killed after it. */
  timeoutMs: number;
  /** V8 heap of the child process (`--max-old-space-size`). */
  maxMemoryMb: number;
}

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'child.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Extracts one document in a child process of its own, under a heap limit and a deadline: a zip
 * bomb, a parser hang or a crash ends that process with an `ExtractionError`, and the caller (the
 * extractor service) keeps running. One process per document keeps files from seeing each other.
 */
export function runSandboxed(bytes: Uint8Array, format: DocumentFormat, limits: SandboxLimits): Promise<Extracted> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], {
      execArgv: ['--import', TSX, `--max-old-space-size=${limits.maxMemoryMb}`, '--stack-size=2000'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 4_000) stderr += chunk;
    });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle(() => reject(new ExtractionError('timeout', `extraction took longer than ${Math.round(limits.timeoutMs / 1000)} s`)));
    }, limits.timeoutMs);
    child.once('message', (reply: SandboxReply) => {
      settle(() => {
        if (reply.ok) resolve({ format, text: reply.text, pages: reply.pages });
        else reject(new ExtractionError(reply.failure, reply.message));
      });
    });
    child.once('error', (error) => settle(() => reject(new ExtractionError('crashed', `the extraction process failed: ${error.message}`))));
    child.once('exit', (code, signal) => {
      settle(() => {
        if (/heap out of memory|allocation failed/i.test(stderr)) {
          reject(new ExtractionError('out_of_memory', `extraction needed more than ${limits.maxMemoryMb} MB of memory`));
        } else {
          reject(new ExtractionError('crashed', `the extraction process ended (${signal ?? `exit ${code}`}) without an answer`));
        }
      });
    });
    const { timeoutMs: _t, maxMemoryMb: _m, ...extractLimits } = limits;
    const request: SandboxRequest = { bytes, format, limits: extractLimits };
    child.send(request);
  });
}
