import type { Citation } from './http/chat';
import type { WireError } from './errors';
import type { AgentChatReply, AgentGenerateReply } from './queries';

/**
 * Token streams between the agent and the gateway, over core NATS.
 *
 * The agent publishes `TokenStreamMessage`s on `Subjects.tokenStream(id)`, numbered from 1 in the
 * `Memex-Stream-Seq` header and the `seq` field; the last one is `end` or `fail`. It never runs more
 * than `window` messages ahead of the last `credit` the gateway sent on `Subjects.tokenStreamControl(id)`,
 * so a slow HTTP reader slows generation instead of growing a buffer. `cancel` (or no credit for the
 * idle timeout) stops generation and aborts the upstream LLM request.
 */
export type TokenStreamMessage =
  | { seq: number; kind: 'token'; content: string }
  | { seq: number; kind: 'citations'; citations: Citation[] }
  | { seq: number; kind: 'heartbeat' }
  | { seq: number; kind: 'end'; reply: AgentChatReply | AgentGenerateReply }
  | { seq: number; kind: 'fail'; error: WireError; partial?: Partial<AgentChatReply> };

export type TokenStreamControl = { kind: 'credit'; upTo: number } | { kind: 'cancel'; reason: string };

/** Messages the agent may publish beyond the last credit. */
export const TOKEN_STREAM_WINDOW = 64;
/** The agent sends a heartbeat when it has published nothing for this long. */
export const TOKEN_STREAM_HEARTBEAT_MS = 2_000;
/** Either side gives up on a stream that stays silent (no message, no credit) this long. */
export const TOKEN_STREAM_IDLE_TIMEOUT_MS = 30_000;

/** The agent's immediate answer to a streamed chat/generate request, before any token. */
export interface StreamAccepted {
  streamId: string;
  chatId?: string;
}
