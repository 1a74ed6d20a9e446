export { pick, seededRandom } from './random';
export { filterCases, generateFilterMemos } from './filterCases';
export type { GeneratedMemo } from './filterCases';
export { eventually, freePort, natsServerAvailable, startNatsServer, tempDir, waitForPort } from './natsServer';
export type { NatsServerHandle } from './natsServer';
export { peerEmbedding, peerRerankScore, startOpenAiPeer } from './openaiPeer';
export type { OpenAiChatScript, OpenAiPeer, OpenAiPeerOptions, OpenAiPeerRequest, OpenAiPeerStep } from './openaiPeer';
