export { AgentEnv, loadAgentConfig } from './config';
export type { AgentConfig } from './config';
export { startAgentService } from './service';
export type { AgentOverrides, AgentService } from './service';
