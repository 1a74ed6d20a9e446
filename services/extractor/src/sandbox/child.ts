/**
 * The sandbox's child process: takes documents over IPC one at a time, extracts each, answers. A
 * file that hangs or exhausts memory here takes down only this process; the parent kills it on
 * time and starts another.
 */
import type { DocumentFormat } from '@memex/contracts';
import { ExtractionError, type ExtractLimits } from '../extract/errors';
import { extractDocument, preloadParsers } from '../extract/extract';

export interface SandboxRequest {
  id: number;
  bytes: Uint8Array;
  format: DocumentFormat;
  limits: ExtractLimits;
}

export type SandboxReply =
  | { id: number; ok: true; text: string; pages: number }
  | { id: number; ok: false; failure: ExtractionError['failure']; message: string }
  /** Sent once, when the parsers are loaded. */
  | { id: 0; ready: true };

async function answer(request: SandboxRequest): Promise<SandboxReply> {
  try {
    const { text, pages } = await extractDocument(request.bytes, request.format, request.limits);
    return { id: request.id, ok: true, text, pages };
  } catch (error) {
    if (error instanceof ExtractionError) return { id: request.id, ok: false, failure: error.failure, message: error.message };
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      return { id: request.id, ok: false, failure: 'too_large', message: 'the document is nested too deeply to read' };
    }
    return { id: request.id, ok: false, failure: 'corrupt', message: `the file could not be read: ${(error as Error)?.message ?? String(error)}` };
  }
}

let queue = Promise.resolve();
process.on('message', (request: SandboxRequest) => {
  queue = queue.then(async () => {
    const reply = await answer(request);
    await new Promise<void>((resolve) => process.send!(reply, () => resolve()));
  });
});
process.on('disconnect', () => process.exit(0));
// Pooled children load every parser up front; a one-shot child loads only the one it needs.
if (process.env.MEMEX_SANDBOX_PRELOAD === '1') await preloadParsers();
process.send!({ id: 0, ready: true } satisfies SandboxReply);
