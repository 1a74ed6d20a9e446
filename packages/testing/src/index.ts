export { pick, seededRandom } from './random';
export { filterCases, generateFilterMemos } from './filterCases';
export type { GeneratedMemo } from './filterCases';
export { eventually, freePort, natsServerAvailable, startNatsServer, tempDir, waitForPort } from './natsServer';
export type { NatsServerHandle } from './natsServer';
export { CHAOS_MODES, chaosProse, chaosScript, peerEmbedding, peerRerankScore, startOpenAiPeer } from './openaiPeer';
export type { ChaosMode, OpenAiChatScript, OpenAiPeer, OpenAiPeerOptions, OpenAiPeerRequest, OpenAiPeerStep } from './openaiPeer';
