/**
 * Every Memex service in one Node process (`pnpm start --single-process`): memo, indexer, agent,
 * extractor (its sandboxed extraction children stay separate processes) and gateway, started in
 * that order on one NATS, stopped in reverse. The same code and configuration as the separate
 * processes; one Node runtime's memory instead of five, for a laptop or a small evaluation box. Scaling and isolation need the separate processes.
 */
import { loadAgentConfig, startAgentService } from '@memex/agent';
import { loadExtractorConfig, startExtractorService } from '@memex/extractor';
import { loadGatewayConfig, startGateway } from '@memex/gateway';
import { loadIndexerConfig, startIndexerService } from '@memex/indexer';
import { loadMemoConfig, startMemoService } from '@memex/memo';
import { configOrExit, onShutdown } from '@memex/runtime';

const env = process.env;
// One process, one operator port: the gateway's (its /readyz and /metrics cover every service).
const { MEMEX_HEALTH_PORT: _operatorPort, ...backEnd } = env;
// Every configuration read before any service starts: one refused stops the process at once.
const config = configOrExit(() => ({
  memo: loadMemoConfig(backEnd),
  indexer: loadIndexerConfig(backEnd),
  agent: loadAgentConfig(backEnd),
  extractor: loadExtractorConfig(backEnd),
  gateway: loadGatewayConfig(env),
}));
// Credentials an external NATS refuses stop the process the same way (the first service to connect finds out).
const { memo, indexer, agent, extractor, gateway } = await configOrExit(async () => {
  const memo = await startMemoService(config.memo);
  const indexer = await startIndexerService(config.indexer);
  const agent = await startAgentService(config.agent);
  const extractor = await startExtractorService(config.extractor);
  const gateway = await startGateway(config.gateway);
  return { memo, indexer, agent, extractor, gateway };
});
onShutdown(gateway.logger, async () => {
  for (const service of [gateway, extractor, agent, indexer, memo]) await service.stop();
});
