/**
 * The container tooling, checked without an engine: the README example of @memex/testcontainers is
 * the example test verbatim; compose.ts substitutes variables as Compose does and reads the
 * embedded profile (every service, ordered after what it depends on, no external image); the
 * bundles list every service of deploy/services.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { interpolate, loadCompose } from '../../deploy/compose';
import { BUNDLES, SERVICE_NAMES } from '../../deploy/services';
import { REPO_ROOT } from '../support/paths';

describe('@memex/testcontainers', () => {
  it('its README example is the example test, verbatim', () => {
    const readme = readFileSync(join(REPO_ROOT, 'packages', 'testcontainers', 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const test = readFileSync(join(REPO_ROOT, 'test', 'containers', 'example.containers.test.ts'), 'utf8');
    expect(example).toBeDefined();
    expect(test.slice(test.indexOf('*/\n') + 3)).toBe(example);
  });
});

describe('deploy/compose.ts', () => {
  it('substitutes ${VAR}, ${VAR:-default} and ${VAR-default} as Compose does', () => {
    const env = { SET: 'x', EMPTY: '' };
    expect(interpolate('${SET} ${UNSET} ${UNSET:-d} ${EMPTY:-d} ${EMPTY-d} ${SET:-d}', env)).toBe('x  d d  x');
  });

  it('runs every service in the embedded profile on Memex-built images only', () => {
    const services = loadCompose({ MEMEX_PORT: '9443' });
    expect(Object.keys(services).sort()).toEqual(['nats', ...SERVICE_NAMES].sort());
    for (const [name, s] of Object.entries(services)) expect(s.image, name).toMatch(/^memex\.local\//);
    expect(services.gateway?.ports).toEqual(['127.0.0.1:9443:8443']);
    for (const name of SERVICE_NAMES) expect(services[name]?.depends_on?.nats, name).toEqual({ condition: 'service_healthy' });
  });
});

describe('deploy/bundle.ts', () => {
  it("bundles every service, the extractor's sandbox child beside it, the CLI and all services in one", () => {
    expect(BUNDLES.map((b) => b.name)).toEqual([...SERVICE_NAMES, 'extractor-child', 'cli', 'all-in-one']);
    expect(BUNDLES.find((b) => b.name === 'all-in-one')?.entry).toBe('scripts/allInOne.ts');
    expect(BUNDLES.find((b) => b.name === 'extractor-child')?.entry).toBe('services/extractor/src/sandbox/child.ts');
  });
});
