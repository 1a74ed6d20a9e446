import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    // Native addons (better-sqlite3, onnxruntime) and child processes: separate processes, not threads.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
