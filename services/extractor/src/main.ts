import { configOrExit, onShutdown } from '@memex/runtime';
import { loadExtractorConfig } from './config';
import { startExtractorService } from './service';

const service = await configOrExit(() => startExtractorService(loadExtractorConfig(process.env)));
onShutdown(service.logger, () => service.stop());
