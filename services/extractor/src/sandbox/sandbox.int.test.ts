import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EXTRACT_LIMITS, ExtractionError } from '../extract/errors';
import { zipBombDocx } from '../testing/documents';
import { SandboxPool, runSandboxed, type SandboxLimits } from './sandbox';

const limits: SandboxLimits = { ...DEFAULT_EXTRACT_LIMITS, timeoutMs: 30_000, maxMemoryMb: 256 };

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

/** HTML big enough that parsing it takes well over a few milliseconds. */
const slowHtml = () => Buffer.from(`<html><body>${'<p>words in a paragraph</p>'.repeat(400_000)}</body></html>`);

describe('the extraction sandbox (child processes)', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = new SandboxPool({ ...limits, maxInflatedBytes: 32 * 1024 * 1024 }, { size: 1 });
    await pool.warm();
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
  });

  it('extracts in a warm child and hands the text back, one document after another', async () => {
    const html = Buffer.from('<html><body><h2>Title here</h2><table><tr><td>a1</td><td>b1</td></tr></table></body></html>');
    expect(await pool.extract(html, 'html')).toEqual({ format: 'html', text: '## Title here\n\na1 | b1', pages: 1 });
    expect((await pool.extract(Buffer.from('second document'), 'text')).text).toBe('second document');
  });

  it("carries the child's refusal (zip bomb) back as an ExtractionError with its reason, and the child stays usable", async () => {
    const error = await failure(pool.extract(zipBombDocx(100), 'docx'));
    expect(error.failure).toBe('too_large');
    expect(error.message).toMatch(/decompression bomb/);
    expect((await pool.extract(Buffer.from('after the bomb'), 'text')).text).toBe('after the bomb');
  });

  it('kills a child that runs past its deadline (a hang); the pool replaces it and the next document works', async () => {
    const error = await failure(pool.extract(slowHtml(), 'html', { timeoutMs: 5 }));
    expect(error.failure).toBe('timeout');
    expect((await pool.extract(Buffer.from('still alive'), 'text')).text).toBe('still alive');
  });

  it('a child that runs out of heap ends as out_of_memory', async () => {
    // ~40 MB of table cells under a 48 MB heap (a one-shot child loads only the HTML parser).
    const cells = '<tr><td>cell text</td><td>more cell text</td></tr>'.repeat(800_000);
    const big = Buffer.from(`<html><body><table>${cells}</table></body></html>`);
    const error = await failure(runSandboxed(big, 'html', { ...limits, maxMemoryMb: 48, maxTextBytes: 500 * 1024 * 1024 }));
    expect(['out_of_memory', 'crashed']).toContain(error.failure);
  });

  it('ends a child left idle past idleTimeoutMs, and starts one again for the next document', async () => {
    const lazy = new SandboxPool(limits, { size: 1, idleTimeoutMs: 300 });
    try {
      expect(lazy.processes).toBe(0);
      expect((await lazy.extract(Buffer.from('first'), 'text')).text).toBe('first');
      expect(lazy.processes).toBe(1);
      await new Promise((r) => setTimeout(r, 800));
      expect(lazy.processes).toBe(0);
      expect((await lazy.extract(Buffer.from('after a rest'), 'text')).text).toBe('after a rest');
      expect(lazy.processes).toBe(1);
    } finally {
      await lazy.close();
    }
  }, 120_000);
});
