import { defineConfig } from 'vitest/config';

// `pnpm test:browser`: the console in Debian's Chromium (see console.browser.test.ts). Not part of `pnpm test`.
export default defineConfig({
  test: {
    include: ['packages/console/browser/**/*.browser.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
