import { configOrExit, onShutdown } from '@memex/runtime';
import { loadGatewayConfig } from './config';
import { startGateway } from './service';

const gateway = await startGateway(configOrExit(() => loadGatewayConfig(process.env)));
onShutdown(gateway.logger, () => gateway.stop());
