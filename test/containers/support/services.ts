/**
 * The four Memex services in this process, against a NATS server of the caller's choosing (a
 * container), the gateway on HTTPS with its self-signed certificate; projects are created with the
 * `memex` CLI, as an operator would.
 */
import { join } from 'node:path';
import { loadAgentConfig, startAgentService, type AgentService } from '@memex/agent';
import { loadGatewayConfig, startGateway, type Gateway } from '@memex/gateway';
import { loadIndexerConfig, startIndexerService, type IndexerService } from '@memex/indexer';
import { loadMemoConfig, startMemoService, type MemoService } from '@memex/memo';
import { tempDir } from '@memex/testing';
import { testStackLogger } from '../../support/logs';
import { REPO_ROOT } from '../../support/paths';
import { runTs } from '../../support/processes';
import { httpsApi, waitForKey, type Api } from './flow';

export interface MemexServices {
  api: Api;
  env: Record<string, string>;
  /** Creates a project with `memex project create` and waits until the gateway accepts its key. */
  project(name: string): Promise<{ projectId: string; key: string }>;
  stop(): Promise<void>;
}

export async function startMemexServices(env: Record<string, string>): Promise<MemexServices> {
  const dir = tempDir('memex-containers-');
  const full: Record<string, string> = {
    MEMEX_DATA_DIR: dir.path,
    MEMEX_MODELS_DIR: join(REPO_ROOT, 'models'),
    MEMEX_PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  };
  const logger = testStackLogger('containers');
  const started: { stop(): Promise<void> }[] = [];
  try {
    const memo: MemoService = await startMemoService(loadMemoConfig(full), { logger });
    started.push(memo);
    const indexer: IndexerService = await startIndexerService(loadIndexerConfig(full), { logger });
    started.push(indexer);
    const agent: AgentService = await startAgentService(loadAgentConfig(full), { logger });
    started.push(agent);
    const gateway: Gateway = await startGateway(loadGatewayConfig(full), { logger });
    started.push(gateway);
    const api = httpsApi(gateway.url, gateway.tls.cert);
    return {
      api,
      env: full,
      async project(name) {
        const created = await runTs('packages/cli/src/main.ts', ['project', 'create', '--name', name, '--json'], full);
        if (created.code !== 0) throw new Error(`memex project create failed (${created.code}): ${created.stderr}`);
        const line = JSON.parse(created.stdout.trim().split('\n').at(-1)!) as { project_id: string; api_key: string };
        await waitForKey(api, line.api_key);
        return { projectId: line.project_id, key: line.api_key };
      },
      stop: () => stopAll(started, dir),
    };
  } catch (error) {
    await stopAll(started, dir);
    throw error;
  }
}

async function stopAll(started: { stop(): Promise<void> }[], dir: { remove(): void }): Promise<void> {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  dir.remove();
}
