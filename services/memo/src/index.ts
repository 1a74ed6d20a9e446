export { loadMemoConfig, MemoEnv } from './config';
export type { MemoConfig } from './config';
export { startMemoService } from './service';
export type { MemoService, MemoServiceOverrides } from './service';
