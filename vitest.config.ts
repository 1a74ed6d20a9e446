import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    // Suites against real backends in containers run with `pnpm test:containers`.
    exclude: [...configDefaults.exclude, 'test/containers/**'],
    // Native addons (better-sqlite3, onnxruntime) and child processes: separate processes, not threads.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
