/**
 * `pnpm build`: compiles each service and the `memex` CLI to one JavaScript file,
 * dist/<name>.mjs, which the images run with plain `node` (no TypeScript at run time).
 *
 * Only Memex's own code (relative imports and the @memex/* workspace packages) goes into a
 * bundle; every third-party package stays an import resolved from node_modules at run time. That
 * keeps native addons (better-sqlite3, usearch, onnxruntime-node), packages that read their own
 * files (@fastify/swagger-ui, transformers.js) and optional dynamic dependencies (mongodb's) exactly
 * as installed, while the TypeScript is compiled once, at build time.
 *
 *   pnpm build                 every bundle
 *   pnpm build gateway cli     some of them
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { BUNDLES, REPO_ROOT } from './services';

/** Leaves every bare import that is not a workspace package to node_modules. */
const thirdPartyExternal: Plugin = {
  name: 'third-party-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@memex/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

export async function bundle(names: readonly string[] = []): Promise<{ name: string; file: string; bytes: number; ms: number }[]> {
  const selected = names.length === 0 ? BUNDLES : BUNDLES.filter((b) => names.includes(b.name));
  const unknown = names.filter((n) => !BUNDLES.some((b) => b.name === n));
  if (unknown.length > 0) throw new Error(`unknown bundle(s): ${unknown.join(', ')}; known: ${BUNDLES.map((b) => b.name).join(', ')}`);
  const outDir = join(REPO_ROOT, 'dist');
  mkdirSync(outDir, { recursive: true });
  const results = [];
  for (const { name, entry } of selected) {
    const started = performance.now();
    const file = join(outDir, `${name}.mjs`);
    await build({
      entryPoints: [join(REPO_ROOT, entry)],
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // The workspace packages export TypeScript sources; resolve them like the type checker does.
      conditions: ['import', 'node', 'default'],
      plugins: [thirdPartyExternal],
      sourcemap: 'linked',
      sourcesContent: false,
      legalComments: 'none',
      logLevel: 'warning',
      // The CLI decides whether it is the entry by comparing import.meta.url with argv[1]: keep it.
      banner: { js: '// Built by deploy/bundle.ts from the Memex sources; do not edit.' },
    });
    results.push({ name, file, bytes: statSync(file).size, ms: Math.round(performance.now() - started) });
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await bundle(process.argv.slice(2));
  for (const r of results) console.log(`dist/${r.name}.mjs  ${(r.bytes / 1024).toFixed(0)} KiB  ${r.ms} ms`);
}
