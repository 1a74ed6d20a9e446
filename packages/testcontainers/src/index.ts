export {
  DEFAULT_MEMEX_IMAGE,
  DEFAULT_NATS_IMAGE,
  DEFAULT_REGISTRY,
  DEFAULT_TAG,
  MemexContainer,
  MemexStack,
  StartedMemexContainer,
  StartedMemexStack,
} from './memex.js';
export type { ApiResponse, LlmOption, MemexEndpoint, MemexProject, MemexStackOptions } from './memex.js';
