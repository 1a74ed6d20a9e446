import { configOrExit, onShutdown } from '@memex/runtime';
import { loadGatewayConfig } from './config';
import { startGateway } from './service';

const gateway = await configOrExit(() => startGateway(loadGatewayConfig(process.env)));
onShutdown(gateway.logger, () => gateway.stop());
