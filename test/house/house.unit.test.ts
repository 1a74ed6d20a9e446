import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths';
import { findCircles, importGraph, importKnots, listSources, longFiles, repoPath } from './houseRules';

/** The house rules hold for every non-test source of these folders; nothing is excluded. */
const ROOTS = ['services', 'packages'];
const MAX_LINES = 700;

describe('house rules', () => {
  const sources = listSources(REPO_ROOT, ROOTS);

  it('finds the sources it checks', () => {
    const paths = sources.map((file) => repoPath(REPO_ROOT, file));
    expect(paths).toContain('packages/contracts/src/index.ts');
    expect(paths).toContain('services/gateway/src/main.ts');
    expect(paths.some((path) => path.endsWith('.test.ts'))).toBe(false);
  });

  it('has no import circles among non-test sources (type-only and dynamic imports count)', () => {
    const graph = importGraph(sources);
    const knots = importKnots(graph);
    // One circle per knot; a knot of more files than its circle names holds further circles.
    const circles = findCircles(graph).map((circle, i) => {
      const path = circle.map((file) => repoPath(REPO_ROOT, file)).join(' → ');
      const files = knots[i]!.length;
      return files > circle.length - 1 ? `${path} (one circle of a knot of ${files} files)` : path;
    });
    expect(circles, `import circles:\n${circles.join('\n')}`).toEqual([]);
  });

  it(`has no non-test source over ${MAX_LINES} lines`, () => {
    const long = longFiles(sources, MAX_LINES).map(({ file, lines }) => `${repoPath(REPO_ROOT, file)}: ${lines} lines`);
    expect(long, `files over ${MAX_LINES} lines:\n${long.join('\n')}`).toEqual([]);
  });
});

describe('the house rules checker', () => {
  const root = mkdtempSync(join(tmpdir(), 'memex-house-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): string => {
    const file = join(root, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    return file;
  };

  it('names a circle closed by a type-only import', () => {
    write('pkg/src/a.ts', "import type { B } from './b';\nexport type A = B[];\n");
    write('pkg/src/b.ts', "import { c } from './c';\nexport type B = { c: typeof c; a?: import('./a').A };\n");
    write('pkg/src/c.ts', 'export const c = 1;\n');
    const sources = listSources(root, ['pkg']);
    const circles = findCircles(importGraph(sources)).map((circle) => circle.map((file) => repoPath(root, file)));
    expect(circles).toEqual([['pkg/src/a.ts', 'pkg/src/b.ts', 'pkg/src/a.ts']]);
    expect(importKnots(importGraph(sources)).map((knot) => knot.map((file) => repoPath(root, file)))).toEqual([['pkg/src/a.ts', 'pkg/src/b.ts']]);
  });

  it('names a circle closed by a lazy import() and a re-export, and ignores test files', () => {
    write('lazy/src/stores.ts', "export async function open() { return (await import('./mongo')).mongo; }\n");
    write('lazy/src/mongo.ts', "export * from './types';\nexport const mongo = 1;\n");
    write('lazy/src/types.ts', "export type { open } from './stores';\n");
    write('lazy/src/stores.test.ts', "import './stores';\nimport './stores.test';\n");
    const sources = listSources(root, ['lazy']);
    expect(sources.map((file) => repoPath(root, file))).toEqual(['lazy/src/mongo.ts', 'lazy/src/stores.ts', 'lazy/src/types.ts']);
    const circles = findCircles(importGraph(sources)).map((circle) => circle.map((file) => repoPath(root, file)));
    expect(circles).toEqual([['lazy/src/mongo.ts', 'lazy/src/types.ts', 'lazy/src/stores.ts', 'lazy/src/mongo.ts']]);
  });

  it('gives one circle per knot and the knot with every file on some circle of it', () => {
    write('knot/src/hub.ts', "import './left';\nimport './right';\nexport const hub = 1;\n");
    write('knot/src/left.ts', "import { hub } from './hub';\nexport const left = hub;\n");
    write('knot/src/right.ts', "import { hub } from './hub';\nexport const right = hub;\n");
    write('knot/src/outside.ts', "import { hub } from './hub';\nexport const outside = hub;\n");
    const graph = importGraph(listSources(root, ['knot']));
    const names = (files: string[]) => files.map((file) => repoPath(root, file));
    expect(findCircles(graph).map(names)).toEqual([['knot/src/hub.ts', 'knot/src/left.ts', 'knot/src/hub.ts']]);
    expect(importKnots(graph).map(names)).toEqual([['knot/src/hub.ts', 'knot/src/left.ts', 'knot/src/right.ts']]);
  });

  it('finds no circle in a tree without one and names a file importing itself', () => {
    write('tree/src/leaf.ts', 'export const leaf = 1;\n');
    write('tree/src/mid.ts', "import { leaf } from './leaf';\nexport const mid = leaf;\n");
    write('tree/src/top.ts', "import { leaf } from './leaf';\nimport { mid } from './mid';\nexport const top = leaf + mid;\n");
    expect(findCircles(importGraph(listSources(root, ['tree'])))).toEqual([]);
    const self = write('self/src/self.ts', "export * from './self';\n");
    expect(findCircles(importGraph(listSources(root, ['self'])))).toEqual([[self, self]]);
  });

  it('names a file over the line limit and passes one at it', () => {
    const lines = (count: number): string => Array.from({ length: count }, (_, i) => `export const v${i} = ${i};\n`).join('');
    write('long/src/at.ts', lines(MAX_LINES));
    const over = write('long/src/over.tsx', lines(MAX_LINES + 1));
    write('long/src/over.test.ts', lines(MAX_LINES + 50));
    expect(longFiles(listSources(root, ['long']), MAX_LINES)).toEqual([{ file: over, lines: MAX_LINES + 1 }]);
  });
});
