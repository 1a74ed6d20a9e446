/**
 * Reads a Server-Sent Events body and yields the JSON of each event's `data`. Comments (`: ping`)
 * and fields other than `data` are skipped; multi-line data is joined with newlines, as the format says.
 */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield JSON.parse(data.join('\n'));
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        }
      }
      if (done) {
        if (data.length > 0) yield JSON.parse(data.join('\n'));
        return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
