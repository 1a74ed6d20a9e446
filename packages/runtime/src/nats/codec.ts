const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson<T>(data: Uint8Array): T {
  return JSON.parse(decoder.decode(data)) as T;
}

/**
 * A value already encoded as JSON, which `serveQuery` sends as it is (a handler that keeps encoded
 * parts of its answers, such as the indexer's search results, skips encoding them per request).
 */
export class EncodedJson {
  constructor(readonly bytes: Uint8Array) {}
}
