import { describe, expect, it } from 'vitest';
import { DEFAULT_EXTRACT_LIMITS, ExtractionError } from '../extract/errors';
import { zipBombDocx } from '../testing/documents';
import { runSandboxed, type SandboxLimits } from './sandbox';

const limits: SandboxLimits = { ...DEFAULT_EXTRACT_LIMITS, timeoutMs: 20_000, maxMemoryMb: 256 };

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

describe('the extraction sandbox (a child process per document)', () => {
  it('extracts in the child and hands the text back', async () => {
    const html = Buffer.from('<html><body><h2>Title here</h2><table><tr><td>a1</td><td>b1</td></tr></table></body></html>');
    const result = await runSandboxed(html, 'html', limits);
    expect(result).toEqual({ format: 'html', text: '## Title here\n\na1 | b1', pages: 1 });
  });

  it("carries the child's refusal (zip bomb) back as an ExtractionError with its reason", async () => {
    const error = await failure(runSandboxed(zipBombDocx(200), 'docx', { ...limits, maxInflatedBytes: 32 * 1024 * 1024 }));
    expect(error.failure).toBe('too_large');
    expect(error.message).toMatch(/decompression bomb/);
  });

  it('kills a child that runs past its deadline', async () => {
    const started = Date.now();
    const error = await failure(runSandboxed(Buffer.from('plain words'), 'text', { ...limits, timeoutMs: 50 }));
    expect(error.failure).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a child that runs out of heap ends as out_of_memory, and the next document still works', async () => {
    // 40 MB of HTML table cells under a 48 MB heap: the parse cannot fit.
    const cells = '<tr><td>cell text</td><td>more cell text</td></tr>'.repeat(800_000);
    const big = Buffer.from(`<html><body><table>${cells}</table></body></html>`);
    const error = await failure(runSandboxed(big, 'html', { ...limits, maxMemoryMb: 48, maxTextBytes: 500 * 1024 * 1024 }));
    expect(['out_of_memory', 'crashed']).toContain(error.failure);
    const ok = await runSandboxed(Buffer.from('still alive'), 'text', limits);
    expect(ok.text).toBe('still alive');
  });
});
