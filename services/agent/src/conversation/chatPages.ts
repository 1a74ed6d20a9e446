import type { Chat, ChatCursor, ChatGetReply, Message } from '@memex/contracts';

/** Room for the page's envelope (`{"ok":true,"value":{…,"next":{…}}}`) beside the messages. */
const ENVELOPE_BYTES = 512;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * The page of `chat` that starts at `cursor` and whose JSON fits in `budgetBytes`: whole messages
 * while they fit, then as much of the next message's content as fits (the next page continues it).
 * A page always makes progress; a single message whose other fields alone exceed the budget goes
 * whole (the reply guard then refuses it rather than crash).
 */
export function pageChat(chat: Chat, cursor: ChatCursor = { message: 0, offset: 0 }, budgetBytes: number): ChatGetReply {
  const messages: Message[] = [];
  let used = jsonBytes({ uuid: chat.uuid, created_at: chat.created_at, messages: [] }) + ENVELOPE_BYTES;
  let offset = cursor.offset;
  for (let i = cursor.message; i < chat.messages.length; i++) {
    const message = chat.messages[i]!;
    const rest = { ...message, content: message.content.slice(offset) };
    const size = jsonBytes(rest) + 1;
    if (used + size <= budgetBytes) {
      messages.push(rest);
      used += size;
      offset = 0;
      continue;
    }
    const available = budgetBytes - used - jsonBytes({ ...rest, content: '' }) - 1;
    const chars = available > 0 ? fittingChars(rest.content, available) : 0;
    if (chars === 0) {
      if (messages.length > 0) return { uuid: chat.uuid, created_at: chat.created_at, messages, next: { message: i, offset } };
      messages.push(rest);
      offset = 0;
      continue;
    }
    messages.push({ ...rest, content: rest.content.slice(0, chars) });
    return { uuid: chat.uuid, created_at: chat.created_at, messages, next: { message: i, offset: offset + chars } };
  }
  return { uuid: chat.uuid, created_at: chat.created_at, messages };
}

/** The most leading characters of `text` whose JSON string body takes at most `bytes` bytes. */
function fittingChars(text: string, bytes: number): number {
  const cost = (n: number) => jsonBytes(text.slice(0, n)) - 2;
  // A UTF-16 unit costs at most 6 bytes of JSON (\uXXXX), so this many always fit.
  let lo = Math.min(text.length, Math.floor(bytes / 6));
  let hi = Math.min(text.length, bytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (cost(mid) <= bytes) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
