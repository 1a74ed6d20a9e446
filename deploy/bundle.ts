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
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { build, stop, type BuildOptions, type Plugin } from 'esbuild';
import { VECTOR_SCAN_ADDON } from '@memex/vector-scan';
import { BUNDLES, REPO_ROOT } from './services';

const CONSOLE_ASSETS = join(REPO_ROOT, 'packages', 'console', 'dist');

/**
 * The gateway serves the console's built assets; a bundle does not sit beside the console package,
 * so they go into a `console` folder beside the bundle, where @memex/console looks for them.
 */
function copyConsoleAssets(outDir: string): void {
  if (!existsSync(join(CONSOLE_ASSETS, 'index.html'))) throw new Error('the console is not built: run pnpm --filter @memex/console build');
  cpSync(CONSOLE_ASSETS, join(outDir, 'console'), { recursive: true });
}

/** The indexer's scan addon (dense and BM25) as `pnpm install` builds it (packages/vector-scan). */
const VECTOR_SCAN_BUILT = join(REPO_ROOT, 'packages', 'vector-scan', 'build', 'Release', VECTOR_SCAN_ADDON);

/**
 * A bundle holds @memex/vector-scan's code but not its compiled addon, which it looks for beside
 * itself: copied there (under a temporary name, then renamed, so a process running the old one
 * keeps its file intact).
 */
function copyVectorScanAddon(outDir: string): void {
  if (!existsSync(VECTOR_SCAN_BUILT)) throw new Error(`the vector scan addon is not built (${VECTOR_SCAN_BUILT}): run pnpm install`);
  const temporary = join(outDir, `.${VECTOR_SCAN_ADDON}-${process.pid}`);
  cpSync(VECTOR_SCAN_BUILT, temporary);
  renameSync(temporary, join(outDir, VECTOR_SCAN_ADDON));
}

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
    if (name === 'gateway') copyConsoleAssets(outDir);
    results.push({ name, file, bytes: statSync(file).size, ms: Math.round(performance.now() - started) });
  }
  copyVectorScanAddon(outDir);
  return results;
}

/**
 * Leaves every third-party import to node_modules as it is installed in this checkout: the import is
 * resolved now, from the file that makes it (pnpm gives each package only its own dependencies), and
 * written as that absolute path. For bundles run in place by `pnpm start`, never shipped.
 */
const thirdPartyInPlace: Plugin = {
  name: 'third-party-in-place',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('@memex/') || args.pluginData === 'in-place' || args.path.startsWith('node:')) return undefined;
      const found = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'in-place' });
      if (found.errors.length > 0 || found.external || !isAbsolute(found.path)) return { path: args.path, external: true };
      return { path: found.path, external: true };
    });
  },
};

/** What every bundle `pnpm start` runs in place shares: ESM for this Node, third-party imports as installed. */
const IN_PLACE: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['import', 'node', 'default'],
  plugins: [thirdPartyInPlace],
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * Compiles `entries` for this machine into `outDir` (for `pnpm start`: plain node, no TypeScript
 * loader in each service process). Third-party packages stay where they are installed.
 */
export async function bundleInPlace(outDir: string, entries: readonly { name: string; entry: string }[]): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  await Promise.all(
    entries.map(({ name, entry }) =>
      build({
        ...IN_PLACE,
        entryPoints: [join(REPO_ROOT, entry)],
        outfile: join(outDir, `${name}.mjs`),
        sourcemap: 'linked',
        sourcesContent: false,
        banner: { js: '// Built by pnpm start (deploy/bundle.ts bundleInPlace) for this checkout only; do not edit or ship.' },
      }),
    ),
  );
  if (entries.some((e) => e.name === 'gateway')) copyConsoleAssets(outDir);
  copyVectorScanAddon(outDir);
  // esbuild keeps a service process (~70 MB) for further builds; a start script builds once.
  await stop();
  return entries.map(({ name }) => join(outDir, `${name}.mjs`));
}

/** Where `pnpm start` runs its own compiled script from (one level below the root, as the source is). */
export const START_SCRIPT_BUNDLE = join(REPO_ROOT, 'dist', 'start.mjs');

/**
 * Compiles `pnpm start`'s own script (scripts/start.ts) to dist/start.mjs, so the supervisor of a
 * running stack is plain node too, without tsx's loader and its memory.
 * Written under a temporary name and renamed: starts running at once never see half a file.
 */
export async function bundleStartScript(): Promise<string> {
  const dir = join(REPO_ROOT, 'dist');
  mkdirSync(dir, { recursive: true });
  const temporary = join(dir, `.start-${process.pid}-${Date.now()}.mjs`);
  try {
    await build({
      ...IN_PLACE,
      entryPoints: [join(REPO_ROOT, 'scripts', 'start.ts')],
      outfile: temporary,
      banner: { js: '// Built by pnpm start (deploy/bundle.ts bundleStartScript) for this checkout only; do not edit or ship.' },
    });
    renameSync(temporary, START_SCRIPT_BUNDLE);
  } finally {
    rmSync(temporary, { force: true });
    await stop();
  }
  return START_SCRIPT_BUNDLE;
}

// `pnpm build` runs this file; pnpm start's compiled script carries this module too, where
// import.meta.url is that script's, so the file's own name decides.
if (import.meta.url === `file://${process.argv[1]}` && import.meta.url.endsWith('/deploy/bundle.ts')) {
  const results = await bundle(process.argv.slice(2));
  for (const r of results) console.log(`dist/${r.name}.mjs  ${(r.bytes / 1024).toFixed(0)} KiB  ${r.ms} ms`);
}
