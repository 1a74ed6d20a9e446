import { onShutdown } from '@memex/runtime';
import { loadIndexerConfig } from './config';
import { startIndexerService } from './service';

const service = await startIndexerService(loadIndexerConfig(process.env));
onShutdown(service.logger, () => service.stop());
