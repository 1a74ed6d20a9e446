export { buildGateway } from './app';
export { GatewayEnv, loadGatewayConfig } from './config';
export type { GatewayConfig } from './config';
export { startGateway } from './service';
export type { Gateway } from './service';
