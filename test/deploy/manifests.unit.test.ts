/**
 * The deployment files, checked offline:
 * - deploy/kubernetes: every object validates against the Kubernetes API schemas and has no field
 *   the API does not know; the workloads have what production needs (probes, resources, hardened
 *   containers, autoscalers, disruption budgets, a 3-server JetStream cluster); the kustomizations
 *   render (when kubectl or kustomize is installed) to objects that validate too;
 * - deploy/compose: the services, profiles and health checks the docs promise, every setting passed
 *   through and documented in .env.example, and `docker compose config` accepts it (when the Docker
 *   Compose plugin, or the standalone docker-compose, is installed);
 * - deploy/docker: what can be checked without building: each image's Dockerfile runs its service's
 *   entry point as uid 10001 with its health probe, the bake file builds every Dockerfile with the
 *   tags Compose expects, and .dockerignore keeps what the build needs.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { AgentEnv } from '@memex/agent/config';
import { ExtractorEnv } from '@memex/extractor/config';
import { GatewayEnv } from '@memex/gateway/config';
import { IndexerEnv } from '@memex/indexer/config';
import { MemoEnv } from '@memex/memo/config';
import { REPO_ROOT } from '../support/paths';
import { isKubernetesObject, schemaErrors, unknownFieldErrors, type KubernetesObject, type LabelledObject } from './kubernetesSchema';

const KUBERNETES = join(REPO_ROOT, 'deploy', 'kubernetes');
const COMPOSE_DIR = join(REPO_ROOT, 'deploy', 'compose');
const COMPOSE_FILE = join(COMPOSE_DIR, 'docker-compose.yml');
const COMPOSE_TLS_FILE = join(COMPOSE_DIR, 'docker-compose.tls.yml');
const ENV_EXAMPLE = join(COMPOSE_DIR, '.env.example');
const MEMEX_SERVICES = ['gateway', 'memo', 'indexer', 'agent', 'extractor'] as const;
const DOCKER_DIR = join(REPO_ROOT, 'deploy', 'docker');

// ---------------------------------------------------------------------------------------------
// Kubernetes

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFiles(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    })
    .sort();
}

/** The documents of a YAML stream; fails on a syntax error. */
function documents(text: string, version: '1.1' | '1.2' = '1.2', merge = false): unknown[] {
  return parseAllDocuments(text, { version, merge })
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('; '));
      return doc.toJS() as unknown;
    })
    .filter((value) => value !== null && value !== undefined);
}

interface Kustomization {
  file: string;
  resources?: string[];
  patches?: { path?: string }[];
  configMapGenerator?: { name: string; envs?: string[]; files?: string[]; literals?: string[]; behavior?: string }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const k8sFiles = yamlFiles(KUBERNETES);
const kustomizations: Kustomization[] = [];
const objects: LabelledObject[] = [];
const patches: LabelledObject[] = [];
const strayDocuments: string[] = [];
{
  const parsed = k8sFiles.map((file) => ({ file, docs: documents(readFileSync(file, 'utf8')) }));
  for (const { file, docs } of parsed) {
    for (const doc of docs) {
      if ((doc as { kind?: string }).kind === 'Kustomization') kustomizations.push({ ...(doc as object), file });
    }
  }
  const patchFiles = new Set(
    kustomizations.flatMap((k) => (k.patches ?? []).flatMap((p) => (p.path ? [resolve(dirname(k.file), p.path)] : []))),
  );
  for (const { file, docs } of parsed) {
    docs.forEach((doc, i) => {
      if ((doc as { kind?: string }).kind === 'Kustomization') return;
      const where = `${relative(KUBERNETES, file)}#${i + 1}`;
      if (!isKubernetesObject(doc)) {
        strayDocuments.push(where);
        return;
      }
      const entry = { label: `${where} ${doc.kind} ${doc.metadata?.name ?? '?'}`, object: doc };
      (patchFiles.has(file) ? patches : objects).push(entry);
    });
  }
}

const base = (kind: string, name: string): KubernetesObject | undefined =>
  objects.find(({ label, object }) => label.startsWith('base/') && object.kind === kind && object.metadata?.name === name)?.object;

interface Probe {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port?: string | number; scheme?: string };
}
interface Container {
  name: string;
  image?: string;
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
}
interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: {
    containers: Container[];
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
    volumes?: { name: string; secret?: { secretName: string }; configMap?: { name: string } }[];
  };
}
const template = (workload: KubernetesObject | undefined) => (workload?.spec as { template: PodTemplate } | undefined)?.template;
const workloads = () => objects.filter(({ object }) => object.kind === 'Deployment' || object.kind === 'StatefulSet');

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** kubectl's built-in kustomize, or a standalone kustomize; undefined when neither is installed. */
function kustomizeCommand(): { command: string; args: (dir: string) => string[] } | undefined {
  if (spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0) {
    return { command: 'kubectl', args: (dir) => ['kustomize', dir] };
  }
  if (spawnSync('kustomize', ['version'], { stdio: 'ignore' }).status === 0) return { command: 'kustomize', args: (dir) => ['build', dir] };
  return undefined;
}

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('are YAML that reads the same under YAML 1.1 (as Kubernetes reads it) and 1.2', () => {
    expect(k8sFiles.length).toBeGreaterThan(5);
    for (const file of k8sFiles) {
      const text = readFileSync(file, 'utf8');
      expect(documents(text, '1.1'), relative(REPO_ROOT, file)).toEqual(documents(text, '1.2'));
    }
    expect(strayDocuments, 'documents that are neither Kubernetes objects nor kustomizations').toEqual([]);
  });

  it('validate against the Kubernetes API schemas', async () => {
    expect(objects.length).toBeGreaterThan(15);
    const errors: string[] = [];
    for (const { label, object } of objects) for (const e of await schemaErrors(object)) errors.push(`${label}: ${e}`);
    expect(errors).toEqual([]);
  });

  it('use no field the Kubernetes API does not know (patches included)', () => {
    expect(unknownFieldErrors(objects)).toEqual([]);
    expect(patches.length).toBeGreaterThan(0);
    expect(unknownFieldErrors(patches, { partial: true })).toEqual([]);
  });

  it.each(MEMEX_SERVICES)('run %s as a Deployment with probes, resources and a hardened non-root container', (service) => {
    const deployment = base('Deployment', `memex-${service}`);
    expect(deployment, `base Deployment memex-${service}`).toBeDefined();
    const pod = template(deployment)!;
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    const [container] = pod.spec.containers;
    expect(container?.image).toMatch(new RegExp(`/memex-${service}:`));
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) expect(container?.[probe], probe).toBeDefined();
    if (service === 'gateway') {
      expect(container!.readinessProbe!.httpGet).toMatchObject({ path: '/readyz', scheme: 'HTTPS' });
      expect(container!.livenessProbe!.httpGet).toMatchObject({ path: '/healthz', scheme: 'HTTPS' });
    } else {
      // Each pod's own health port, not the NATS ping any instance of the service may answer.
      expect(container!.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 'health' });
      expect(container!.livenessProbe!.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(container!.env?.find((e) => e.name === 'MEMEX_HEALTH_PORT')?.value).toBe('9090');
    }
    for (const kind of ['requests', 'limits'] as const) {
      expect(Object.keys(container?.resources?.[kind] ?? {}).sort(), `resources.${kind}`).toEqual(['cpu', 'memory']);
    }
    expect(container?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container?.envFrom).toContainEqual({ configMapRef: { name: 'memex-config' } });
  });

  it('autoscale gateway, indexer, agent and extractor, and give every workload a PodDisruptionBudget', () => {
    const hpas = objects.filter(({ object }) => object.kind === 'HorizontalPodAutoscaler').map(({ object }) => object);
    const scaled = hpas.map((h) => (h.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef);
    expect(scaled.filter((t) => t.kind === 'Deployment').map((t) => t.name).sort()).toEqual(['memex-agent', 'memex-extractor', 'memex-gateway', 'memex-indexer']);
    for (const hpa of hpas) {
      const spec = hpa.spec as { minReplicas: number; maxReplicas: number };
      expect(spec.minReplicas, hpa.metadata?.name).toBeGreaterThanOrEqual(2);
      expect(spec.maxReplicas).toBeGreaterThan(spec.minReplicas);
      // An autoscaled Deployment leaves `replicas` to the autoscaler, or every apply would reset it.
      const target = base('Deployment', (hpa.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name);
      expect((target?.spec as { replicas?: number }).replicas, `${hpa.metadata?.name}: replicas`).toBeUndefined();
    }
    const budgets = objects.filter(({ object }) => object.kind === 'PodDisruptionBudget').map(({ object }) => object);
    for (const { label, object } of workloads()) {
      const labels = template(object)?.metadata?.labels;
      const covering = budgets.filter((b) => matches((b.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, labels));
      expect(covering.length, `${label}: PodDisruptionBudgets`).toBe(1);
    }
  });

  it('run NATS as a 3-server JetStream cluster with routes, and tell Memex to use 3 replicas', () => {
    const nats = base('StatefulSet', 'memex-nats');
    const spec = nats?.spec as { replicas: number; serviceName: string; volumeClaimTemplates?: unknown[] };
    expect(spec.replicas).toBe(3);
    expect(spec.volumeClaimTemplates).toHaveLength(1);
    expect(base('Service', spec.serviceName)?.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    const conf = readFileSync(join(KUBERNETES, 'base', 'nats.conf'), 'utf8');
    expect(conf).toMatch(/^jetstream\s*\{/m);
    const routes = [...conf.matchAll(/nats:\/\/([\w.-]+):6222/g)].map((m) => m[1]);
    expect(routes).toEqual([0, 1, 2].map((n) => `memex-nats-${n}.${spec.serviceName}`));
    const env = readFileSync(join(KUBERNETES, 'base', 'memex.env'), 'utf8');
    expect(env).toMatch(/^MEMEX_NATS_REPLICAS=3$/m);
    expect(env).toMatch(/^NATS_URL=nats:\/\/memex-nats:4222$/m);
    expect(base('Service', 'memex-nats')).toBeDefined();
  });

  it('read only Secrets and keys that secrets.example.yaml defines, and ConfigMaps the kustomization generates', () => {
    const secrets = new Map(
      objects
        .filter(({ object }) => object.kind === 'Secret')
        .map(({ object }) => [object.metadata!.name!, Object.keys({ ...(object.stringData as object), ...(object.data as object) })]),
    );
    const generated = new Set(kustomizations.flatMap((k) => (k.configMapGenerator ?? []).map((g) => g.name)));
    for (const { label, object } of workloads()) {
      const pod = template(object)!;
      for (const volume of pod.spec.volumes ?? []) {
        if (volume.secret) expect(secrets.has(volume.secret.secretName), `${label}: Secret ${volume.secret.secretName}`).toBe(true);
        if (volume.configMap) expect(generated.has(volume.configMap.name), `${label}: ConfigMap ${volume.configMap.name}`).toBe(true);
      }
      for (const container of pod.spec.containers) {
        for (const ref of container.env ?? []) {
          const key = ref.valueFrom?.secretKeyRef;
          if (key) expect(secrets.get(key.name), `${label}: ${ref.name} from Secret ${key.name}`).toContain(key.key);
        }
        for (const from of container.envFrom ?? []) {
          if (from.configMapRef) expect(generated.has(from.configMapRef.name), `${label}: ConfigMap ${from.configMapRef.name}`).toBe(true);
        }
      }
    }
    expect(secrets.get('memex-tls')?.sort()).toEqual(['tls.crt', 'tls.key']);
  });

  it('route every Service to pods and named ports that exist', () => {
    const pods = workloads().map(({ object }) => template(object)!);
    for (const { label, object } of objects.filter(({ object }) => object.kind === 'Service')) {
      const spec = object.spec as { selector: Record<string, string>; ports: { targetPort?: string | number }[] };
      const targets = pods.filter((p) => matches(spec.selector, p.metadata?.labels));
      expect(targets.length, `${label}: pods selected`).toBeGreaterThan(0);
      for (const port of spec.ports) {
        if (typeof port.targetPort !== 'string') continue;
        for (const pod of targets) {
          const names = pod.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
          expect(names, `${label}: targetPort ${port.targetPort}`).toContain(port.targetPort);
        }
      }
    }
  });

  describe('rendered with kustomize', () => {
    const kustomize = kustomizeCommand();
    const dirs = kustomizations.map((k) => dirname(k.file));
    if (!kustomize) {
      const reason = 'kustomize rendering skipped: neither kubectl nor kustomize is installed';
      console.warn(reason);
      it.skip(reason, () => undefined);
      return;
    }
    it.each(dirs.map((d) => relative(KUBERNETES, d)))('%s renders to valid objects in the memex namespace', async (dir) => {
      const result = spawnSync(kustomize.command, kustomize.args(join(KUBERNETES, dir)), { encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      const rendered = documents(result.stdout).filter(isKubernetesObject);
      expect(rendered.length).toBeGreaterThan(15);
      const errors: string[] = [];
      for (const object of rendered) {
        for (const e of await schemaErrors(object)) errors.push(`${object.kind} ${object.metadata?.name}: ${e}`);
        if (object.kind !== 'Namespace') expect(object.metadata?.namespace, `${object.kind} ${object.metadata?.name}`).toBe('memex');
      }
      expect(errors).toEqual([]);
      expect(unknownFieldErrors(rendered.map((object) => ({ label: `${object.kind} ${object.metadata?.name}`, object })))).toEqual([]);
      const images = rendered.flatMap((o) => template(o)?.spec.containers.map((c) => c.image) ?? []);
      const rewrites = kustomizations.find((k) => dirname(k.file) === join(KUBERNETES, dir))?.images ?? [];
      for (const { name, newName } of rewrites) {
        if (newName) expect(images.filter((image) => image?.startsWith(`${name}:`)), `${name} rewritten`).toEqual([]);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Compose

interface ComposeService {
  image?: string;
  profiles?: string[];
  restart?: string;
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  ports?: string[];
  secrets?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file: string }>;
}

const composeText = readFileSync(COMPOSE_FILE, 'utf8');
const compose = parse(composeText, { merge: true }) as ComposeFile;
const tlsOverlay = parse(readFileSync(COMPOSE_TLS_FILE, 'utf8'), { merge: true }) as ComposeFile;
const envExample = readFileSync(ENV_EXAMPLE, 'utf8');

/** The services `docker compose --profile ...` starts. */
function activeServices(profiles: string[]): string[] {
  return Object.entries(compose.services)
    .filter(([, s]) => !s.profiles || s.profiles.some((p) => profiles.includes(p)))
    .map(([name]) => name)
    .sort();
}

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}` ... in a Compose file. */
function interpolated(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)(?:[:]?[-?+][^}]*)?\}/g)].map((m) => m[1]!))].sort();
}

/** VAR=... or # VAR=... lines of .env.example. */
const documented = new Set([...envExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));

/** `docker compose` (plugin) or the standalone `docker-compose`; undefined when neither is installed. */
function composeCli(): { command: string; prefix: string[]; name: string } | undefined {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return { command: 'docker', prefix: ['compose'], name: 'docker compose' };
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return { command: 'docker-compose', prefix: [], name: 'docker-compose' };
  return undefined;
}

describe('Docker Compose stack (deploy/compose)', () => {
  it('defines the stack with the documented profiles: ollama, builtin and tools', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['agent-builtin', 'agent-ollama', 'cli', 'extractor', 'gateway', 'indexer', 'memo', 'mongodb', 'mongodb-init', 'nats', 'ollama', 'ollama-pull', 'qdrant'].sort(),
    );
    const byProfile = (profile: string) =>
      Object.entries(compose.services)
        .filter(([, s]) => s.profiles?.includes(profile))
        .map(([name]) => name)
        .sort();
    expect(byProfile('ollama')).toEqual(['agent-ollama', 'ollama', 'ollama-pull']);
    expect(byProfile('builtin')).toEqual(['agent-builtin']);
    expect(byProfile('tools')).toEqual(['cli']);
    expect(compose.services['agent-ollama']?.environment?.OLLAMA_HOST).toBe('http://ollama:11434');
    expect(compose.services['agent-builtin']?.environment).not.toHaveProperty('OLLAMA_HOST');
    expect(compose.services.nats?.image).toMatch(/^\$\{NATS_IMAGE:-nats:2\.(1\d|[2-9]\d)/);
    expect(compose.services.qdrant?.image).toMatch(/qdrant\/qdrant:v1\.(1[6-9]|[2-9]\d)\./);
    expect(compose.services.mongodb?.image).toContain('mongo:7');
    expect(readFileSync(join(COMPOSE_DIR, 'nats.conf'), 'utf8')).toMatch(/^\s*sync_interval:\s*always$/m);
  });

  it.each([[['ollama']], [['builtin']], [['ollama', 'tools']], [['builtin', 'tools']]])(
    'with profiles %j runs exactly one agent and depends only on services it starts',
    (profiles) => {
      const active = activeServices(profiles);
      expect(active.filter((s) => s.startsWith('agent-'))).toHaveLength(1);
      for (const name of active) {
        for (const dependency of Object.keys(compose.services[name]!.depends_on ?? {})) {
          expect(active, `${name} depends on ${dependency}`).toContain(dependency);
        }
      }
    },
  );

  it('health-checks and restarts every long-running service; one-shot jobs run once', () => {
    const oneShot = ['mongodb-init', 'ollama-pull'];
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === 'cli') continue;
      if (oneShot.includes(name)) {
        expect(service.restart, name).toBe('no');
        continue;
      }
      expect(service.restart, name).toBe('unless-stopped');
      expect(service.healthcheck?.test?.[0], `${name} healthcheck`).toBe('CMD');
    }
    for (const service of MEMEX_SERVICES) {
      for (const [name, s] of Object.entries(compose.services).filter(([n]) => n === service || n.startsWith(`${service}-`))) {
        expect(s.healthcheck?.test, name).toEqual(['CMD', 'memex-health', service, 'ready']);
        expect(s.image, name).toBe(`\${MEMEX_REGISTRY:-memex.local}/memex-${service}:\${MEMEX_TAG:-dev}`);
      }
    }
    // Started only after the replica set is initiated and the model is pulled.
    for (const name of ['memo', 'agent-ollama', 'agent-builtin']) {
      expect(compose.services[name]?.depends_on?.['mongodb-init'], name).toEqual({ condition: 'service_completed_successfully' });
    }
    expect(compose.services['agent-ollama']?.depends_on?.['ollama-pull']).toEqual({ condition: 'service_completed_successfully' });
    expect(compose.services.gateway?.ports).toEqual(['${MEMEX_HTTPS_BIND:-0.0.0.0}:${MEMEX_HTTPS_PORT:-8443}:8443']);
  });

  it("passes every service's settings through, and documents every variable in .env.example", () => {
    // Set by the images or the TLS overlay, or for tests only.
    const notPassed = new Set([
      'MEMEX_DATA_DIR',
      'MEMEX_FAILPOINTS',
      'MEMEX_HOST',
      'MEMEX_PORT',
      'MEMEX_TLS_CERT',
      'MEMEX_TLS_KEY',
      'MEMEX_MODELS_DIR',
      'MEMEX_ALLOW_REMOTE_MODELS',
      'EMBEDDING_MODEL',
    ]);
    const schemas = { gateway: GatewayEnv, memo: MemoEnv, indexer: IndexerEnv, 'agent-ollama': AgentEnv, extractor: ExtractorEnv };
    for (const [name, schema] of Object.entries(schemas)) {
      const missing = Object.keys(schema.properties).filter((key) => !notPassed.has(key) && !(key in (compose.services[name]?.environment ?? {})));
      expect(missing, `settings of ${name} not passed through docker-compose.yml`).toEqual([]);
    }
    expect(tlsOverlay.services.gateway?.environment).toEqual({ MEMEX_TLS_CERT: '/run/secrets/memex_tls_cert', MEMEX_TLS_KEY: '/run/secrets/memex_tls_key' });

    const used = interpolated(composeText + readFileSync(COMPOSE_TLS_FILE, 'utf8'));
    expect(used.filter((v) => !documented.has(v)), 'variables missing from .env.example').toEqual([]);
    const composeOwn = ['COMPOSE_PROJECT_NAME', 'COMPOSE_PROFILES'];
    const buildTime = ['EMBEDDING_MODEL', 'EXTRA_EMBEDDING_MODELS'];
    expect([...documented].filter((v) => !used.includes(v) && !composeOwn.includes(v) && !buildTime.includes(v)), 'documented but unused').toEqual([]);
  });

  describe('`docker compose config`', () => {
    const cli = composeCli();
    if (!cli) {
      const reason = '`docker compose config` skipped: neither the Docker Compose plugin nor docker-compose is installed';
      console.warn(reason);
      it.skip(reason, () => undefined);
      return;
    }
    it.each([
      ['ollama + tools', ['--profile', 'ollama', '--profile', 'tools'], [COMPOSE_FILE]],
      ['builtin', ['--profile', 'builtin'], [COMPOSE_FILE]],
      ['builtin with the TLS overlay', ['--profile', 'builtin'], [COMPOSE_FILE, COMPOSE_TLS_FILE]],
    ])(`${cli.name} accepts the stack with %s`, (_, profiles, files) => {
      // No daemon needed; a clean environment so the host's COMPOSE_* settings do not leak in.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COMPOSE_')));
      const args = [...cli.prefix, '--env-file', ENV_EXAMPLE, ...files.flatMap((f) => ['-f', f]), ...profiles, 'config', '--quiet'];
      const result = spawnSync(cli.command, args, { encoding: 'utf8', env, timeout: 60_000 });
      expect(result.status, `${cli.name} ${args.join(' ')}\n${result.stderr}`).toBe(0);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Images

/** A Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(file: string): string[] {
  return readFileSync(file, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** `target "name" { ... }` blocks of the bake file: name → attributes written as `key = "value"`. */
function bakeTargets(): Map<string, Record<string, string>> {
  const text = readFileSync(join(DOCKER_DIR, 'docker-bake.hcl'), 'utf8');
  const targets = new Map<string, Record<string, string>>();
  for (const m of text.matchAll(/^target "([\w-]+)" \{([\s\S]*?)^\}/gm)) {
    const attributes: Record<string, string> = {};
    for (const a of m[2]!.matchAll(/^\s*(\w+)\s*=\s*(.+)$/gm)) attributes[a[1]!] = a[2]!.trim();
    targets.set(m[1]!, attributes);
  }
  return targets;
}

describe('container images (deploy/docker)', () => {
  it('service.Dockerfile prunes a compiled service, runs it with plain node as uid 10001, and probes health', () => {
    const lines = instructions(join(DOCKER_DIR, 'service.Dockerfile'));
    expect(lines).toContain('FROM memex-build AS prune');
    expect(lines.find((l) => l.startsWith('RUN ') && l.includes('prune.sh'))).toMatch(/sh deploy\/docker\/prune\.sh \/out "\$SERVICE" cli$/);
    expect(lines).toContain('FROM memex-runtime');
    expect(lines).toContain('COPY --from=prune /out /app');
    expect(lines).toContain('USER 10001:10001');
    expect(lines.find((l) => l.startsWith('HEALTHCHECK'))).toMatch(/CMD memex-health "\$MEMEX_SERVICE" ready$/);
    expect(lines.at(-1)).toBe('CMD ["sh", "-c", "exec node --enable-source-maps /app/dist/$MEMEX_SERVICE.mjs"]');
    // No TypeScript loader at run time in any image.
    for (const file of readdirSync(DOCKER_DIR).filter((f) => f.endsWith('.Dockerfile'))) {
      const last = instructions(join(DOCKER_DIR, file)).filter((l) => l.startsWith('CMD') || l.startsWith('ENTRYPOINT'));
      expect(last.join(' '), file).not.toMatch(/tsx|\.ts\b/);
    }
    expect(readFileSync(join(DOCKER_DIR, 'memex'), 'utf8')).toContain('exec node /app/dist/cli.mjs "$@"');
  });

  it('every service of deploy/services.json has an entry point, and the bake file builds each one', () => {
    const listed = (JSON.parse(readFileSync(join(REPO_ROOT, 'deploy', 'services.json'), 'utf8')) as { services: { name: string }[] }).services.map((s) => s.name);
    expect(listed).toEqual(expect.arrayContaining([...MEMEX_SERVICES]));
    for (const name of listed) expect(statSync(join(REPO_ROOT, 'services', name, 'src', 'main.ts')).isFile(), name).toBe(true);
    const bake = readFileSync(join(DOCKER_DIR, 'docker-bake.hcl'), 'utf8');
    const defaults = /variable "SERVICES" \{\s*default = (\[[^\]]*\])/.exec(bake)?.[1];
    expect(JSON.parse(defaults ?? '[]'), 'docker-bake.hcl SERVICES default = deploy/services.json').toEqual(listed);
  });

  it('cli.Dockerfile runs `memex`; the indexer and standalone images bake the model in and never download one', () => {
    const cli = instructions(join(DOCKER_DIR, 'cli.Dockerfile'));
    expect(cli.find((l) => l.includes('prune.sh'))).toMatch(/prune\.sh \/out cli$/);
    expect(cli).toContain('ENTRYPOINT ["memex"]');
    for (const file of ['indexer.Dockerfile', 'memex.Dockerfile']) {
      const lines = instructions(join(DOCKER_DIR, file));
      expect(lines, file).toContain('ARG EMBEDDING_MODEL=memex-glove-100d');
      expect(lines, file).toContain('COPY --from=model /models /app/models');
      expect(lines.find((l) => l.startsWith('ENV EMBEDDING_MODEL=${EMBEDDING_MODEL} MEMEX_ALLOW_REMOTE_MODELS=false')), file).toBeDefined();
      expect(lines, file).toContain('USER 10001:10001');
    }
    const standalone = instructions(join(DOCKER_DIR, 'memex.Dockerfile'));
    expect(standalone).toContain('VOLUME /data');
    expect(standalone.at(-1)).toBe('CMD ["node", "/usr/local/lib/memex/memex-supervisor.mjs"]');
  });

  it('the bake file builds every Dockerfile, tagged as Compose and Kubernetes expect', () => {
    const targets = bakeTargets();
    expect(targets.get('service')).toMatchObject({ name: '"service-${svc}"', tags: '["${MEMEX_REGISTRY}/memex-${svc}:${MEMEX_TAG}"]' });
    expect(targets.get('cli')?.tags).toBe('["${MEMEX_REGISTRY}/memex-cli:${MEMEX_TAG}"]');
    expect(targets.get('memex')?.tags).toBe('["${MEMEX_REGISTRY}/memex:${MEMEX_TAG}"]');
    expect(targets.get('base-runtime')).toMatchObject({ dockerfile: '"deploy/docker/base.Dockerfile"', target: '"runtime"' });
    expect(targets.get('base-build')).toMatchObject({ target: '"workspace"' });
    const bake = readFileSync(join(DOCKER_DIR, 'docker-bake.hcl'), 'utf8');
    // workspace.Dockerfile is podman's copy of base.Dockerfile's workspace stage (its builder cannot
    // take a stage of another build): bake builds the stage itself, and the two must not drift.
    const dockerfiles = readdirSync(DOCKER_DIR).filter((f) => f.endsWith('.Dockerfile') && f !== 'workspace.Dockerfile');
    expect(dockerfiles.filter((f) => !bake.includes(`deploy/docker/${f}`))).toEqual([]);
    const steps = (text: string) => text.split('\n').filter((l) => /^(COPY|RUN) /.test(l));
    const base = readFileSync(join(DOCKER_DIR, 'base.Dockerfile'), 'utf8');
    expect(steps(readFileSync(join(DOCKER_DIR, 'workspace.Dockerfile'), 'utf8'))).toEqual(steps(base.slice(base.indexOf('FROM deps AS workspace'))));
    // The images the Kubernetes manifests run are the ones bake tags by default.
    for (const { object } of workloads().filter(({ label }) => label.startsWith('base/'))) {
      for (const container of template(object)!.spec.containers) {
        if (container.image?.includes('memex-')) expect(container.image).toMatch(/^memex\.local\/memex-(gateway|memo|indexer|agent|extractor):dev$/);
      }
    }
  });

  it('.dockerignore keeps what the build needs in the context', () => {
    const patterns = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('!'))
      .map((l) => l.replace(/^\//, '').replace(/^\*\*\//, '').replace(/\/$/, ''));
    const needed = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'packages', 'services', 'deploy/services.json', 'deploy/services.ts', 'deploy/bundle.ts', 'deploy/docker/prune.sh', 'deploy/docker/memex', 'deploy/docker/memex-health.mjs', 'deploy/docker/memex-supervisor.mjs', 'deploy/docker/bases/npm-fetch.sh', 'deploy/docker/build-model.sh', 'deploy/docker/fetch-model.ts'];
    for (const path of needed) {
      const excluding = patterns.filter((p) => path === p || path.startsWith(`${p}/`));
      expect(excluding, path).toEqual([]);
      expect(statSync(join(REPO_ROOT, path)), path).toBeDefined();
    }
    expect(patterns).toEqual(expect.arrayContaining(['node_modules', '.git', 'models']));
  });
});
