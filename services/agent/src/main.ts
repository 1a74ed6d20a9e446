import { configOrExit, onShutdown } from '@memex/runtime';
import { loadAgentConfig } from './config';
import { startAgentService } from './service';

const service = await configOrExit(() => startAgentService(loadAgentConfig(process.env)));
onShutdown(service.logger, () => service.stop());
