/**
 * The docs hold together: every relative link and #anchor of the READMEs and docs/ resolves as
 * GitHub resolves it, and the README and the benchmarks page stay within their sizes.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths';
import { anchorsOf, brokenLinks, githubSlug } from './links';

const README_MAX_BYTES = 25_000;
const BENCHMARKS_MAX_BYTES = 30_000;

/** README.md, docs/*.md, and the README of every service, package and deployment. */
function documents(): string[] {
  const files = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const parent of ['services', 'packages', 'deploy']) {
    for (const dir of readdirSync(join(REPO_ROOT, parent))) {
      const readme = join(parent, dir, 'README.md');
      try {
        if (statSync(join(REPO_ROOT, readme)).isFile()) files.push(readme);
      } catch {
        // no README there
      }
    }
  }
  return files;
}

describe('the docs', () => {
  it('have no broken relative link or anchor', () => {
    const files = documents();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/configuration.md', 'docs/benchmarks.md']));
    const broken = brokenLinks(REPO_ROOT, files).map((b) => `${b.file}:${b.line}: (${b.target}) ${b.reason}`);
    expect(broken).toEqual([]);
  });

  it('keep README.md within 25 KB and docs/benchmarks.md within 30 KB', () => {
    expect(statSync(join(REPO_ROOT, 'README.md')).size).toBeLessThanOrEqual(README_MAX_BYTES);
    expect(statSync(join(REPO_ROOT, 'docs', 'benchmarks.md')).size).toBeLessThanOrEqual(BENCHMARKS_MAX_BYTES);
  });
});

describe('the link check', () => {
  const root = mkdtempSync(join(tmpdir(), 'memex-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it('slugs headings as GitHub does', () => {
    expect(githubSlug('SDK (`@memex/client`)')).toBe('sdk-memexclient');
    expect(githubSlug('`rag_config`')).toBe('rag_config');
    expect(githubSlug('Running on one machine (`pnpm start`)')).toBe('running-on-one-machine-pnpm-start');
    expect(githubSlug('Reading them: spread and pairs')).toBe('reading-them-spread-and-pairs');
    expect(githubSlug('Keys, tokens and certificates')).toBe('keys-tokens-and-certificates');
    expect([...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n<a name="here"></a>\n')]).toEqual(['a', 'notes', 'notes-1', 'here']);
  });

  it('finds a missing file, a missing anchor and an anchor into a file that is not Markdown', () => {
    write('docs/guide.md', '# Guide\n\n## Set up\n\nText.\n');
    write('docs/picture.png', 'not really a PNG');
    write(
      'README.md',
      [
        '# Readme',
        'See [the guide](docs/guide.md), [setting up](docs/guide.md#set-up), [above](#readme), ![a picture](docs/picture.png),',
        '[the web](https://example.com/nowhere.md) and [mail](mailto:someone@example.com).',
        'Broken: [gone](docs/gone.md) and [no such part](docs/guide.md#tear-down).',
        '[wrong](docs/picture.png#top) and [self](#nothing-here).',
        '`[in code](docs/not-checked.md)`',
        '```',
        '[in a fence](docs/not-checked-either.md)',
        '```',
        '[ref]: docs/also-gone.md',
      ].join('\n'),
    );
    const broken = brokenLinks(root, ['README.md']);
    expect(broken.map((b) => [b.line, b.target])).toEqual([
      [4, 'docs/gone.md'],
      [4, 'docs/guide.md#tear-down'],
      [5, 'docs/picture.png#top'],
      [5, '#nothing-here'],
      [10, 'docs/also-gone.md'],
    ]);
    expect(broken[0]!.reason).toBe('docs/gone.md does not exist');
    expect(broken[1]!.reason).toBe('docs/guide.md has no heading #tear-down');
  });
});
