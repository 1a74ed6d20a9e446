import { request } from 'node:https';
import {
  AbstractStartedContainer,
  GenericContainer,
  Network,
  Wait,
  type StartedNetwork,
  type StartedTestContainer,
} from 'testcontainers';

/** The standalone image `pnpm images` builds (all services and NATS in one container). */
export const DEFAULT_MEMEX_IMAGE = 'memex.local/memex:dev';
/** Where the composed services' images come from: `<registry>/memex-<service>:<tag>`. */
export const DEFAULT_REGISTRY = 'memex.local';
export const DEFAULT_TAG = 'dev';
/** NATS for MemexStack: Debian's nats-server, built by `pnpm images` (use nats:2.11-alpine with a registry). */
export const DEFAULT_NATS_IMAGE = 'memex.local/nats:2.9-bookworm';

const HTTPS_PORT = 8443;
/** The plain-HTTP /healthz and /readyz of memo, indexer, agent, … (MEMEX_HEALTH_PORT). */
const HEALTH_PORT = 9090;

/** Which LLM answers chats and writes summaries: the built-in extractive provider, or Ollama. */
export type LlmOption = { provider: 'builtin' } | { provider: 'ollama'; host: string; model?: string };

export interface MemexProject {
  organizationId: string;
  projectId: string;
  apiKey: string;
}

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

/** What a started Memex offers a test: where it is, a project and key, and a small HTTPS client. */
export interface MemexEndpoint extends MemexProject {
  /** e.g. https://localhost:32768 */
  baseUrl: string;
  /** The gateway's self-signed certificate (PEM), to trust in your own HTTPS client. */
  caCertificate: string;
  /** Calls the API with the project's key, trusting the certificate: `api('POST', '/api/v1/memo', {...})`. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>;
}

function llmEnvironment(llm: LlmOption | undefined): Record<string, string> {
  if (!llm || llm.provider === 'builtin') return {};
  return { OLLAMA_HOST: llm.host, ...(llm.model ? { OLLAMA_MODEL: llm.model } : {}) };
}

function apiClient(baseUrl: string, ca: string, key: string): MemexEndpoint['api'] {
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = request(
        new URL(path, baseUrl),
        {
          method,
          ca,
          // The certificate is made for "localhost"; the container may be reached by another name.
          checkServerIdentity: () => undefined,
          headers: {
            authorization: `Bearer ${key}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as never, headers: res.headers });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** The container with the CPU and memory quota given (none where undefined). */
function limited(container: GenericContainer, resources: { cpu?: number; memory?: number } | undefined): GenericContainer {
  return resources ? container.withResourcesQuota(resources) : container;
}

async function execOk(container: StartedTestContainer, command: string[]): Promise<string> {
  const result = await container.exec(command);
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')} failed (${result.exitCode}): ${result.output}`);
  return result.stdout;
}

async function retry<T>(what: string, fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Waits until the gateway accepts the key (the gateways learn new keys through a KV watch). */
async function keyAccepted(api: MemexEndpoint['api']): Promise<void> {
  await retry(
    'the gateway never accepted the new API key',
    async () => {
      const r = await api('GET', '/api/v1/memo/00000000-0000-4000-8000-000000000000');
      if (r.status !== 404) throw new Error(`status ${r.status}`);
    },
    30_000,
  );
}

function parseProject(json: string): MemexProject {
  const line = JSON.parse(json.trim().split('\n').at(-1)!) as { organization_id: string; project_id: string; api_key: string };
  return { organizationId: line.organization_id, projectId: line.project_id, apiKey: line.api_key };
}

/**
 * Memex in one container (the standalone image: every service and an embedded NATS, one volume).
 *
 * ```ts
 * const memex = await new MemexContainer().start();
 * await memex.api('POST', '/api/v1/memo', { title: 't', content: 'c' });
 * await memex.stop();
 * ```
 */
export class MemexContainer extends GenericContainer {
  private projectName = 'test';

  constructor(image: string = process.env.MEMEX_IMAGE || DEFAULT_MEMEX_IMAGE) {
    super(image);
    this.withExposedPorts(HTTPS_PORT)
      .withEnvironment({ MEMEX_BOOTSTRAP_PROJECT: this.projectName, LOG_LEVEL: 'warn' })
      .withWaitStrategy(Wait.forHttp('/readyz', HTTPS_PORT).usingTls().allowInsecure().forStatusCode(200))
      .withStartupTimeout(180_000);
  }

  /** The project created on start (default "test"). */
  withProjectName(name: string): this {
    this.projectName = name;
    return this.withEnvironment({ MEMEX_BOOTSTRAP_PROJECT: name });
  }

  /** The embedding model: one baked into the image, or a directory you mount under /app/models. */
  withEmbeddingModel(model: string): this {
    return this.withEnvironment({ EMBEDDING_MODEL: model });
  }

  /** The LLM: `{ provider: 'ollama', host: 'http://ollama:11434', model: 'qwen2.5:0.5b' }`; built-in by default. */
  withLlm(llm: LlmOption): this {
    return this.withEnvironment(llmEnvironment(llm));
  }

  override async start(): Promise<StartedMemexContainer> {
    const started = await super.start();
    const bootstrap = await retry('no /data/bootstrap.json', () => execOk(started, ['cat', '/data/bootstrap.json']), 60_000);
    const caCertificate = await execOk(started, ['cat', '/data/tls/cert.pem']);
    const project = parseProject(bootstrap);
    const baseUrl = `https://${started.getHost()}:${started.getMappedPort(HTTPS_PORT)}`;
    const api = apiClient(baseUrl, caCertificate, project.apiKey);
    await keyAccepted(api);
    return new StartedMemexContainer(started, { ...project, baseUrl, caCertificate, api });
  }
}

export class StartedMemexContainer extends AbstractStartedContainer implements MemexEndpoint {
  readonly baseUrl: string;
  readonly caCertificate: string;
  readonly organizationId: string;
  readonly projectId: string;
  readonly apiKey: string;
  readonly api: MemexEndpoint['api'];

  constructor(started: StartedTestContainer, endpoint: MemexEndpoint) {
    super(started);
    this.baseUrl = endpoint.baseUrl;
    this.caCertificate = endpoint.caCertificate;
    this.organizationId = endpoint.organizationId;
    this.projectId = endpoint.projectId;
    this.apiKey = endpoint.apiKey;
    this.api = endpoint.api;
  }

  /** Runs the `memex` CLI inside the container, e.g. `memex('project', 'create', '--name', 'b', '--json')`. */
  async memex(...args: string[]): Promise<string> {
    return execOk(this, ['memex', ...args]);
  }
}

export interface MemexStackOptions {
  /** Registry and tag of the per-service images (`<registry>/memex-<service>:<tag>`). */
  registry?: string;
  tag?: string;
  natsImage?: string;
  /** The services to run (default: gateway, memo, indexer, agent, extractor). */
  services?: string[];
  llm?: LlmOption;
  embeddingModel?: string;
  /** Extra environment for every service. */
  environment?: Record<string, string>;
  /**
   * Limits per service container, as `docker run --cpus` and `--memory` set them: `cpu` in cores,
   * `memory` in GB. E.g. `{ indexer: { cpu: 1 } }` runs the indexer on one core's worth of CPU time.
   */
  resources?: Record<string, { cpu?: number; memory?: number }>;
}

/**
 * Memex as it is deployed: NATS and one container per service on a private network, each service
 * on its embedded stores. `service(name)` gives the container, e.g. to kill and restart it.
 */
export class MemexStack {
  constructor(private readonly options: MemexStackOptions = {}) {}

  async start(): Promise<StartedMemexStack> {
    const o = this.options;
    const registry = o.registry ?? process.env.MEMEX_REGISTRY ?? DEFAULT_REGISTRY;
    const tag = o.tag ?? process.env.MEMEX_TAG ?? DEFAULT_TAG;
    const services = o.services ?? ['memo', 'indexer', 'agent', 'extractor', 'gateway'];
    const network = await new Network().start();
    const started: StartedTestContainer[] = [];
    try {
      const nats = await new GenericContainer(o.natsImage ?? process.env.MEMEX_NATS_IMAGE ?? DEFAULT_NATS_IMAGE)
        .withNetwork(network)
        .withNetworkAliases('nats')
        .withCommand(['--jetstream', '--store_dir=/data', '--http_port=8222'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forListeningPorts())
        .start();
      started.push(nats);
      const env = {
        NATS_URL: 'nats://nats:4222',
        LOG_LEVEL: 'warn',
        ...llmEnvironment(o.llm),
        ...(o.embeddingModel ? { EMBEDDING_MODEL: o.embeddingModel } : {}),
        ...o.environment,
      };
      const byName = new Map<string, StartedTestContainer>([['nats', nats]]);
      // Non-gateway services first, in parallel; the gateway is ready once they all answer.
      const workers = services.filter((s) => s !== 'gateway');
      const startedWorkers = await Promise.all(
        workers.map((name) =>
          limited(new GenericContainer(`${registry}/memex-${name}:${tag}`), o.resources?.[name])
            .withNetwork(network)
            .withNetworkAliases(name)
            .withEnvironment({ ...env, MEMEX_HEALTH_PORT: String(HEALTH_PORT) })
            .withExposedPorts(HEALTH_PORT)
            .withWaitStrategy(Wait.forHttp('/readyz', HEALTH_PORT).forStatusCode(200))
            .withStartupTimeout(180_000)
            .start(),
        ),
      );
      workers.forEach((name, i) => byName.set(name, startedWorkers[i]!));
      started.push(...startedWorkers);
      let endpoint: MemexEndpoint | undefined;
      if (services.includes('gateway')) {
        const gateway = await limited(new GenericContainer(`${registry}/memex-gateway:${tag}`), o.resources?.gateway)
          .withNetwork(network)
          .withNetworkAliases('gateway')
          .withEnvironment({ ...env, MEMEX_PORT: String(HTTPS_PORT), MEMEX_HEALTH_PORT: String(HEALTH_PORT) })
          .withExposedPorts(HTTPS_PORT, HEALTH_PORT)
          .withWaitStrategy(Wait.forHttp('/readyz', HTTPS_PORT).usingTls().allowInsecure().forStatusCode(200))
          .withStartupTimeout(180_000)
          .start();
        started.push(gateway);
        byName.set('gateway', gateway);
        const project = parseProject(await execOk(gateway, ['memex', 'project', 'create', '--name', 'test', '--json']));
        const caCertificate = await execOk(gateway, ['cat', '/data/tls/cert.pem']);
        const baseUrl = `https://${gateway.getHost()}:${gateway.getMappedPort(HTTPS_PORT)}`;
        const api = apiClient(baseUrl, caCertificate, project.apiKey);
        await keyAccepted(api);
        endpoint = { ...project, baseUrl, caCertificate, api };
      }
      return new StartedMemexStack(network, byName, endpoint);
    } catch (error) {
      for (const c of started.reverse()) await c.stop().catch(() => undefined);
      await network.stop().catch(() => undefined);
      throw error;
    }
  }
}

export class StartedMemexStack {
  constructor(
    private readonly network: StartedNetwork,
    private readonly containers: Map<string, StartedTestContainer>,
    private readonly endpoint: MemexEndpoint | undefined,
  ) {}

  private get gateway(): MemexEndpoint {
    if (!this.endpoint) throw new Error('this stack runs no gateway');
    return this.endpoint;
  }

  get baseUrl(): string {
    return this.gateway.baseUrl;
  }
  get apiKey(): string {
    return this.gateway.apiKey;
  }
  get projectId(): string {
    return this.gateway.projectId;
  }
  get caCertificate(): string {
    return this.gateway.caCertificate;
  }
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.gateway.api<T>(method, path, body);
  }

  /**
   * The Prometheus text of every running instance's metrics, as the gateway gathers them over NATS
   * on its operator port (MEMEX_HEALTH_PORT, plain HTTP, never the API's port).
   */
  async metrics(): Promise<string> {
    const gateway = this.service('gateway');
    const res = await fetch(`http://${gateway.getHost()}:${gateway.getMappedPort(HEALTH_PORT)}/metrics`);
    if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
    return res.text();
  }

  /** The container of a service (`nats`, `gateway`, `memo`, …). */
  service(name: string): StartedTestContainer {
    const c = this.containers.get(name);
    if (!c) throw new Error(`no ${name} in this stack (${[...this.containers.keys()].join(', ')})`);
    return c;
  }

  async stop(): Promise<void> {
    for (const c of [...this.containers.values()].reverse()) await c.stop({ remove: true, removeVolumes: true }).catch(() => undefined);
    await this.network.stop().catch(() => undefined);
  }
}
