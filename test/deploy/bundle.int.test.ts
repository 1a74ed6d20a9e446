/**
 * The compiled bundles: what the images run (`pnpm build`, dist/<name>.mjs) and what `pnpm start`
 * runs in place (bundleInPlace). Both must carry what the sources find beside themselves (the
 * console's assets, the dense scan's native addon), and the in-place bundles must resolve every third-party import from here.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { consoleDir } from '@memex/console';
import { VECTOR_SCAN_ADDON } from '@memex/vector-scan';
import { tempDir } from '@memex/testing';
import { DEFAULT_EXTRACT_LIMITS } from '../../services/extractor/src/extract/errors';
import type { SandboxPool as SandboxPoolType } from '../../services/extractor/src/sandbox/sandbox';
import { bundle, bundleInPlace } from '../../deploy/bundle';
import { REPO_ROOT } from '../../deploy/services';

/** What a bundle imports at its top level (what loads when it starts). */
function staticImports(code: string): string[] {
  return [...code.matchAll(/^import\s[^'"]*?["']([^"']+)["']/gm)].map((m) => m[1]!);
}

describe('compiled bundles', () => {
  it("carry the console's assets beside the gateway bundle, where @memex/console finds them", async () => {
    await bundle(['gateway']);
    const dist = join(REPO_ROOT, 'dist');
    expect(existsSync(join(dist, 'console', 'index.html'))).toBe(true);
    expect(existsSync(join(dist, VECTOR_SCAN_ADDON))).toBe(true);
    expect(consoleDir(dist, {})).toBe(join(dist, 'console'));
    // In the sources the package's own build is used; an operator can point elsewhere.
    expect(consoleDir(join(REPO_ROOT, 'packages', 'console'), {})).toBe(join(REPO_ROOT, 'packages', 'console', 'dist'));
    expect(consoleDir(dist, { MEMEX_CONSOLE_DIR: '/srv/console' })).toBe('/srv/console');
  }, 60_000);

  it('in place: every third-party import is an absolute path that exists in this checkout', async () => {
    const dir = tempDir('memex-bundle-');
    try {
      const [file] = await bundleInPlace(dir.path, [{ name: 'gateway', entry: 'services/gateway/src/main.ts' }]);
      const code = readFileSync(file!, 'utf8');
      const imports = staticImports(code);
      const thirdParty = imports.filter((p) => !p.startsWith('node:'));
      expect(thirdParty.length).toBeGreaterThan(5);
      for (const path of thirdParty) {
        expect(path.startsWith('/'), path).toBe(true);
        expect(existsSync(path), path).toBe(true);
      }
      expect(existsSync(join(dir.path, 'console', 'index.html'))).toBe(true);
    } finally {
      dir.remove();
    }
  }, 60_000);

  it('the indexer bundle loads transformers.js and onnxruntime only when a model needs them', async () => {
    const dir = tempDir('memex-bundle-');
    try {
      const [file] = await bundleInPlace(dir.path, [{ name: 'indexer', entry: 'services/indexer/src/main.ts' }]);
      const code = readFileSync(file!, 'utf8');
      const imports = staticImports(code);
      expect(imports.some((p) => p.includes('@huggingface/tokenizers'))).toBe(true);
      expect(imports.filter((p) => /@huggingface\/transformers|onnxruntime/.test(p))).toEqual([]);
      expect(code).toMatch(/import\(["'][^"']*@huggingface\/transformers/);
    } finally {
      dir.remove();
    }
  }, 60_000);

  it('no service loads at start the clients of servers it is not configured for (MongoDB, Qdrant, Ollama), the certificate maker or the MCP SDK', async () => {
    // Each costs a process 6-25 MiB and up to 0.3 s of CPU when imported (bench:footprint).
    const optional = /\/(mongodb|@qdrant\/js-client-rest|ollama|selfsigned|@modelcontextprotocol\/sdk|zod)\//;
    const dir = tempDir('memex-bundle-');
    try {
      const services = ['gateway', 'memo', 'indexer', 'agent', 'extractor'];
      const files = await bundleInPlace(
        dir.path,
        services.map((name) => ({ name, entry: `services/${name}/src/main.ts` })),
      );
      const lazy = new Set<string>();
      files.forEach((file, i) => {
        const code = readFileSync(file, 'utf8');
        expect(staticImports(code).filter((p) => optional.test(p)), services[i]).toEqual([]);
        for (const m of code.matchAll(/import\(["']([^"']+)["']\)/g)) {
          const name = optional.exec(m[1]!)?.[1];
          if (name) lazy.add(`${services[i]}:${name}`);
        }
      });
      // Where they are used, they are still there: imported when a configuration asks for them.
      for (const used of ['memo:mongodb', 'agent:mongodb', 'agent:ollama', 'indexer:@qdrant/js-client-rest', 'gateway:selfsigned', 'gateway:@modelcontextprotocol/sdk', 'gateway:zod']) {
        expect(lazy.has(used), used).toBe(true);
      }
    } finally {
      dir.remove();
    }
  }, 120_000);

  it("compiled, the extractor forks its compiled sandbox child (no TypeScript loader) and extracts with it", async () => {
    const dir = tempDir('memex-bundle-');
    try {
      await bundleInPlace(dir.path, [
        { name: 'sandbox', entry: 'services/extractor/src/sandbox/sandbox.ts' },
        { name: 'extractor-child', entry: 'services/extractor/src/sandbox/child.ts' },
      ]);
      const { SandboxPool } = (await import(join(dir.path, 'sandbox.mjs'))) as { SandboxPool: typeof SandboxPoolType };
      const pool = new SandboxPool({ ...DEFAULT_EXTRACT_LIMITS, timeoutMs: 60_000, maxMemoryMb: 256 }, { size: 1 });
      try {
        const html = Buffer.from('<html><body><h2>Berths</h2><p>Ships dock at dawn.</p></body></html>');
        expect((await pool.extract(html, 'html')).text).toBe('## Berths\n\nShips dock at dawn.');
      } finally {
        await pool.close();
      }
    } finally {
      dir.remove();
    }
  }, 120_000);

  it("compiled in place (pnpm start's bundles live in a temporary directory), the indexer's scan thread finds the scan's addon beside the bundle and answers", async () => {
    const dir = tempDir('memex-bundle-');
    try {
      const [file] = await bundleInPlace(dir.path, [{ name: 'scan-probe', entry: 'test/deploy/fixtures/scanThreadProbe.ts' }]);
      const { stdout } = await promisify(execFile)(process.execPath, [file!], { cwd: dir.path });
      expect(JSON.parse(stdout)).toEqual({ nearest: 'c-0', served: 1, failures: [] });
    } finally {
      dir.remove();
    }
  }, 60_000);
});
