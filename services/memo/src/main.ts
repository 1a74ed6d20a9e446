import { configOrExit, onShutdown } from '@memex/runtime';
import { loadMemoConfig } from './config';
import { startMemoService } from './service';

const service = await configOrExit(() => startMemoService(loadMemoConfig(process.env)));
onShutdown(service.logger, () => service.stop());
