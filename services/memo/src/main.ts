import { configOrExit, onShutdown } from '@memex/runtime';
import { loadMemoConfig } from './config';
import { startMemoService } from './service';

const service = await startMemoService(configOrExit(() => loadMemoConfig(process.env)));
onShutdown(service.logger, () => service.stop());
