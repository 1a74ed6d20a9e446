export { IndexerEnv, loadIndexerConfig } from './config';
export type { IndexerConfig } from './config';
export { startIndexerService } from './service';
export type { IndexerService } from './service';
