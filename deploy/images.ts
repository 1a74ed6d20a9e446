/**
 * `pnpm images [name...]`: builds the Memex images with the engine present (deploy/engine.ts) and
 * prints each one's size. Names: the services of deploy/services.json, `cli` and `memex` (the
 * standalone image); all of them by default. Tags: ${MEMEX_REGISTRY}/memex-<name>:${MEMEX_TAG}
 * (default memex.local/…:dev), and ${MEMEX_REGISTRY}/memex:${MEMEX_TAG} for the standalone image.
 *
 * Bases (MEMEX_BASES): `official` builds on node:22-bookworm-slim; `local` builds its own from a
 * Debian mirror and an npm registry alone (mmdebstrap → memex.local/debian:bookworm, then
 * bases/node.Dockerfile → memex.local/node:<version>-bookworm, bases/nats.Dockerfile →
 * memex.local/nats:2.9-bookworm), which is what air-gapped sites have; `auto` (default) uses the
 * official base when the engine has it or can pull it, else the local ones. The Debian root
 * filesystem is cached in MEMEX_CACHE_DIR (default ~/.cache/memex) and the engine's layer cache
 * makes later builds incremental.
 *
 * Network during builds: apt and the npm registry (NPM_REGISTRY). A registry behind its own CA or
 * a TLS-inspecting proxy: the CA bundle (MEMEX_BUILD_CA, else npm's `cafile`, else
 * NODE_EXTRA_CA_CERTS) is passed as the build secret `ca`, never stored in an image.
 * With Docker the service images are built by `docker buildx bake` (deploy/docker/docker-bake.hcl).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { requireEngine, type Engine } from './engine';
import { REPO_ROOT, SERVICES, SERVICE_NAMES } from './services';

const env = process.env;
const REGISTRY = env.MEMEX_REGISTRY || 'memex.local';
const TAG = env.MEMEX_TAG || 'dev';
const NODE_VERSION = env.NODE_VERSION || '22.23.3';
const NPM_REGISTRY = env.NPM_REGISTRY || 'https://registry.npmjs.org/';
const CACHE = env.MEMEX_CACHE_DIR || join(homedir(), '.cache', 'memex');
const OFFICIAL_NODE = env.NODE_IMAGE || 'docker.io/library/node:22-bookworm-slim';
export const LOCAL_DEBIAN = 'memex.local/debian:bookworm';
export const LOCAL_NODE = `memex.local/node:${NODE_VERSION}-bookworm`;
export const LOCAL_NATS = 'memex.local/nats:2.9-bookworm';

export const ALL_IMAGES = [...SERVICE_NAMES, 'cli', 'memex'];
export const imageTag = (name: string) => (name === 'memex' ? `${REGISTRY}/memex:${TAG}` : `${REGISTRY}/memex-${name}:${TAG}`);

function buildCa(): string | undefined {
  if (env.MEMEX_BUILD_CA) return env.MEMEX_BUILD_CA;
  const npm = spawnSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' });
  const cafile = npm.status === 0 ? npm.stdout.trim() : '';
  if (cafile && cafile !== 'null' && cafile !== 'undefined' && existsSync(cafile)) return cafile;
  return env.NODE_EXTRA_CA_CERTS && existsSync(env.NODE_EXTRA_CA_CERTS) ? env.NODE_EXTRA_CA_CERTS : undefined;
}

const hasImage = (engine: Engine, image: string) => engine.run(['image', 'inspect', image], { stdio: 'ignore' }).status === 0;

function timed<T>(label: string, fn: () => T): T {
  const started = Date.now();
  const result = fn();
  console.log(`images: ${label} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/** Debian minbase from the mirror, cached as a tar, imported once. */
function debianBase(engine: Engine): void {
  if (hasImage(engine, LOCAL_DEBIAN)) return;
  mkdirSync(CACHE, { recursive: true });
  const tar = join(CACHE, 'debian-bookworm-minbase.tar');
  if (!existsSync(tar)) {
    timed('mmdebstrap (Debian bookworm minbase)', () => {
      const partial = `${tar}.partial.tar`;
      rmSync(partial, { force: true });
      const mirror = env.DEBIAN_MIRROR ? [env.DEBIAN_MIRROR] : [];
      // Documentation and translations are never read in a container.
      const args = ['--variant=minbase', '--include=ca-certificates', '--format=tar',
        '--dpkgopt=path-exclude=/usr/share/doc/*', '--dpkgopt=path-include=/usr/share/doc/*/copyright',
        '--dpkgopt=path-exclude=/usr/share/man/*', '--dpkgopt=path-exclude=/usr/share/locale/*', '--dpkgopt=path-exclude=/usr/share/info/*',
        'bookworm', partial, ...mirror];
      const r = spawnSync('mmdebstrap', args, { stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`mmdebstrap failed (${r.error?.message ?? `exit ${r.status}`}); on Debian: apt-get install -y mmdebstrap`);
      renameSync(partial, tar);
    });
  }
  timed(`import ${LOCAL_DEBIAN}`, () => engine.exec(['import', '--quiet', tar, LOCAL_DEBIAN], { stdio: ['ignore', 'ignore', 'inherit'] }));
}

function build(engine: Engine, args: string[], ca: string | undefined, context = REPO_ROOT): void {
  const common = engine.kind === 'podman' ? ['build', '--format', 'docker', '--layers'] : ['build'];
  const secret = ca ? ['--secret', `id=ca,src=${ca}`] : [];
  const quiet = env.MEMEX_BUILD_VERBOSE ? [] : ['--quiet'];
  engine.exec([...common, ...quiet, ...secret, '--build-arg', `NPM_REGISTRY=${NPM_REGISTRY}`, ...args, context], {
    stdio: ['ignore', env.MEMEX_BUILD_VERBOSE ? 'inherit' : 'ignore', 'inherit'],
  });
}

/** What base.Dockerfile's deps stage reads, and nothing else: the lockfile, the workspace manifests, the build helpers. */
function manifestsContext(): string {
  const dir = mkdtempSync(join(tmpdir(), 'memex-manifests-'));
  const copy = (relative: string) => {
    mkdirSync(dirname(join(dir, relative)), { recursive: true });
    copyFileSync(join(REPO_ROOT, relative), join(dir, relative));
  };
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(REPO_ROOT, relative), { withFileTypes: true })) {
      if (entry.isDirectory() && !['node_modules', '.git', 'dist', 'data', 'models'].includes(entry.name)) walk(join(relative, entry.name));
      else if (entry.isFile() && entry.name === 'package.json') copy(join(relative, entry.name));
    }
  };
  walk('.');
  for (const file of ['pnpm-lock.yaml', 'pnpm-workspace.yaml', 'deploy/docker/bases/npm-fetch.sh', 'deploy/docker/memex', 'deploy/docker/memex-health.mjs']) copy(file);
  return dir;
}

function chooseBases(engine: Engine): 'official' | 'local' {
  const wanted = env.MEMEX_BASES || 'auto';
  if (wanted === 'official' || wanted === 'local') return wanted;
  if (hasImage(engine, OFFICIAL_NODE)) return 'official';
  const pulled = engine.run(['pull', '--quiet', OFFICIAL_NODE], { timeout: 120_000 });
  if (pulled.status === 0) return 'official';
  console.log(`images: ${OFFICIAL_NODE} cannot be pulled (${pulled.stderr.trim().split('\n').at(-1)}); building local bases from Debian and npm`);
  return 'local';
}

export function buildImages(names: readonly string[]): { name: string; tag: string; bytes: number }[] {
  const engine = requireEngine();
  const unknown = names.filter((n) => !ALL_IMAGES.includes(n));
  if (unknown.length > 0) throw new Error(`unknown image(s): ${unknown.join(', ')}; known: ${ALL_IMAGES.join(', ')}`);
  const selected = names.length > 0 ? names : ALL_IMAGES;
  const ca = buildCa();
  console.log(`images: engine ${engine.kind}${ca ? `, build CA ${ca}` : ''}`);
  const bases = chooseBases(engine);
  let nodeImage = OFFICIAL_NODE;
  if (bases === 'local') {
    debianBase(engine);
    if (!hasImage(engine, LOCAL_NODE)) {
      timed(LOCAL_NODE, () => build(engine, ['-f', 'deploy/docker/bases/node.Dockerfile', '--build-arg', `DEBIAN_IMAGE=${LOCAL_DEBIAN}`, '--build-arg', `NODE_VERSION=${NODE_VERSION}`, '-t', LOCAL_NODE], ca));
    }
    timed(LOCAL_NATS, () => build(engine, ['-f', 'deploy/docker/bases/nats.Dockerfile', '--build-arg', `DEBIAN_IMAGE=${LOCAL_DEBIAN}`, '-t', LOCAL_NATS], ca));
    nodeImage = LOCAL_NODE;
  }

  if (engine.kind === 'docker') {
    // Bake builds the shared stages once and every image from them (named contexts).
    const targets = selected.map((n) => (SERVICE_NAMES.includes(n) ? `service-${n}` : n));
    timed('docker buildx bake', () =>
      engine.exec(['buildx', 'bake', '-f', 'deploy/docker/docker-bake.hcl', '--load', ...(ca ? ['--set', `*.secrets=id=ca,src=${ca}`] : []), ...targets], {
        cwd: REPO_ROOT,
        env: { ...engine.env, NODE_IMAGE: nodeImage, NPM_REGISTRY, MEMEX_REGISTRY: REGISTRY, MEMEX_TAG: TAG, SERVICES: JSON.stringify(SERVICE_NAMES) },
      }),
    );
  } else {
    // podman: the shared stages as local images the Dockerfiles name in FROM.
    const baseArgs = ['-f', join(REPO_ROOT, 'deploy/docker/base.Dockerfile'), '--build-arg', `NODE_IMAGE=${nodeImage}`];
    timed('memex-runtime (shared run-time stage)', () => build(engine, [...baseArgs, '--target', 'runtime', '-t', 'localhost/memex-runtime:latest'], ca));
    // buildah keys a `COPY --from` layer on the source stage's image, not on the files copied, so
    // with the whole repository as context every source edit re-ran the dependency install (8 min
    // warm). The dependencies are built from a context holding only the manifests: reused until a
    // package.json or the lockfile changes.
    const manifests = manifestsContext();
    try {
      timed('memex-deps (toolchain, dependencies)', () => build(engine, [...baseArgs, '--target', 'deps', '-t', 'localhost/memex-deps:latest'], ca, manifests));
    } finally {
      rmSync(manifests, { recursive: true, force: true });
    }
    timed('memex-build (compiled sources)', () => build(engine, ['-f', 'deploy/docker/workspace.Dockerfile', '-t', 'localhost/memex-build:latest'], ca));
    for (const name of selected) {
      const spec = SERVICES.find((s) => s.name === name);
      const dockerfile = spec?.needsModel ? `deploy/docker/${name}.Dockerfile` : spec ? 'deploy/docker/service.Dockerfile' : `deploy/docker/${name}.Dockerfile`;
      const args = ['-f', dockerfile, '-t', imageTag(name), ...(spec && !spec.needsModel ? ['--build-arg', `SERVICE=${name}`] : [])];
      if (env.EMBEDDING_MODEL && (spec?.needsModel || name === 'memex')) args.push('--build-arg', `EMBEDDING_MODEL=${env.EMBEDDING_MODEL}`);
      timed(imageTag(name), () => build(engine, args, ca));
    }
  }

  const sizes = selected.map((name) => {
    const tag = imageTag(name);
    const inspected = engine.run(['image', 'inspect', '--format', '{{.Size}}', tag]);
    return { name, tag, bytes: Number(inspected.stdout.trim()) || 0 };
  });
  return sizes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  const sizes = buildImages(process.argv.slice(2));
  console.log('\nimage                                     size');
  for (const s of sizes) console.log(`${s.tag.padEnd(40)} ${(s.bytes / 1e6).toFixed(0).padStart(5)} MB`);
  console.log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
