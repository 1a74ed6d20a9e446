/**
 * The sandbox's child process: takes one document over IPC, extracts it, answers, exits. A file
 * that hangs or exhausts memory here takes down only this process; the parent kills it on time.
 */
import type { DocumentFormat } from '@memex/contracts';
import { ExtractionError, type ExtractLimits } from '../extract/errors';
import { extractDocument } from '../extract/extract';

export interface SandboxRequest {
  bytes: Uint8Array;
  format: DocumentFormat;
  limits: ExtractLimits;
}

export type SandboxReply =
  | { ok: true; text: string; pages: number }
  | { ok: false; failure: ExtractionError['failure']; message: string };

process.once('message', (request: SandboxRequest) => {
  void (async () => {
    let reply: SandboxReply;
    try {
      const { text, pages } = await extractDocument(request.bytes, request.format, request.limits);
      reply = { ok: true, text, pages };
    } catch (error) {
      reply =
        error instanceof ExtractionError
          ? { ok: false, failure: error.failure, message: error.message }
          : error instanceof RangeError && /call stack/i.test(error.message)
            ? { ok: false, failure: 'too_large', message: 'the document is nested too deeply to read' }
            : { ok: false, failure: 'corrupt', message: `the file could not be read: ${(error as Error)?.message ?? String(error)}` };
    }
    process.send!(reply, () => process.exit(0));
  })();
});
