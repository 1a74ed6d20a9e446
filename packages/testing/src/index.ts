export { pick, seededRandom } from './random';
export { filterCases, generateFilterMemos } from './filterCases';
export type { GeneratedMemo } from './filterCases';
export { eventually, freePort, natsServerAvailable, startNatsServer, tempDir, waitForPort } from './natsServer';
export type { NatsServerHandle } from './natsServer';
