import { defineConfig } from 'vite';

// Preact through esbuild's automatic JSX runtime: no plugin needed. Served by the gateway under /console/.
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, reportCompressedSize: true },
  logLevel: 'warn',
});
