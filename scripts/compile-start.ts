/**
 * The first half of `pnpm start`: compiles scripts/start.ts to dist/start.mjs, which the second half
 * runs with plain node (see deploy/bundle.ts bundleStartScript).
 */
import { bundleStartScript } from '../deploy/bundle';

await bundleStartScript();
