/**
 * Every Memex service in one Node process (`pnpm start --single-process`): memo, indexer, agent,
 * extractor (its sandboxed extraction children stay separate processes) and gateway, started in
 * that order on one NATS, stopped in reverse. The same code and configuration as the separate
 * processes; one Node runtime instead of five (measured by bench:footprint --single-process) for
 * a laptop or a small evaluation box. Scaling and isolation need the separate processes.
 */
import { loadAgentConfig, startAgentService } from '@memex/agent';
import { loadExtractorConfig, startExtractorService } from '@memex/extractor';
import { loadGatewayConfig, startGateway } from '@memex/gateway';
import { loadIndexerConfig, startIndexerService } from '@memex/indexer';
import { loadMemoConfig, startMemoService } from '@memex/memo';
import { onShutdown } from '@memex/runtime';

const env = process.env;
const memo = await startMemoService(loadMemoConfig(env));
const indexer = await startIndexerService(loadIndexerConfig(env));
const agent = await startAgentService(loadAgentConfig(env));
const extractor = await startExtractorService(loadExtractorConfig(env));
const gateway = await startGateway(loadGatewayConfig(env));
onShutdown(gateway.logger, async () => {
  for (const service of [gateway, extractor, agent, indexer, memo]) await service.stop();
});
