import { configOrExit, onShutdown } from '@memex/runtime';
import { loadIndexerConfig } from './config';
import { startIndexerService } from './service';

const service = await configOrExit(() => startIndexerService(loadIndexerConfig(process.env)));
onShutdown(service.logger, () => service.stop());
