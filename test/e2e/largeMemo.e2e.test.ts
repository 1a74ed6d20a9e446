/**
 * Large memos through the stack as a user runs it (HTTPS, separate processes, its own nats-server,
 * `--no-restart` so a crash shows): content is stored by reference, read back byte for byte,
 * chunked, embedded and searched whole; a body above the limit gets a 413 the client can read.
 */
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memo, SearchResultItem } from '@memex/contracts';
import { eventually } from '@memex/testing';
import { bigText } from '../support/bigText';
import { httpsJson } from '../support/https';
import { startProcessStack, type ProcessStack } from '../support/processStack';

const MiB = 1024 * 1024;

describe('large memos over HTTPS', () => {
  let stack: ProcessStack;
  const timings: Record<string, number> = {};
  beforeAll(async () => {
    stack = await startProcessStack({}, ['--no-restart']);
  }, 150_000);
  afterAll(async () => {
    console.info(`[large memos] ${JSON.stringify(timings)}`);
    await stack?.stop();
  });

  const api = <T>(method: string, path: string, body?: unknown) =>
    httpsJson<T>(method, `${stack.base}${path}`, { agent: stack.agent, key: stack.key, ...(body === undefined ? {} : { body }) });
  const search = async (query: string) => {
    const res = await api<{ results: SearchResultItem[] }>('POST', '/api/v1/search', { query, search_method: 'chunk_vector_search', limit: 5 });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    return res.body;
  };
  const noCrash = () => expect(stack.output()).not.toMatch(/exited \(/);

  /** Creates, reads back, waits for processing and searches the last sentence of a memo of `bytes`. */
  async function roundTrip(label: string, bytes: number, lastSentence: string, query: string, timeoutMs: number) {
    const content = bigText(bytes, lastSentence, bytes);
    let t = performance.now();
    const created = await api<{ memo_uuid: string }>('POST', '/api/v1/memo', { title: `${label} manual`, content });
    expect(created.status, created.text.slice(0, 200)).toBe(200);
    timings[`${label} POST ms`] = Math.round(performance.now() - t);
    const id = created.body.memo_uuid;

    t = performance.now();
    const read = await api<Memo>('GET', `/api/v1/memo/${id}`);
    timings[`${label} GET ms`] = Math.round(performance.now() - t);
    expect(read.status).toBe(200);
    expect(read.body.content === content).toBe(true);
    expect(read.body.content_length).toBe(content.length);

    t = performance.now();
    const memo = await eventually(
      async () => {
        const res = await api<Memo>('GET', `/api/v1/memo/${id}`);
        expect(res.status).toBe(200);
        return res.body.pending ? undefined : res.body;
      },
      timeoutMs,
      // Each poll reads the whole memo (twice its size with the chunks): poll big ones less often.
      Math.max(1_000, Math.round((bytes / MiB) * 250)),
    );
    timings[`${label} processed ms`] = Math.round(performance.now() - t);
    expect(memo.processing_error).toBeNull();
    expect(memo.content === content).toBe(true);
    expect(memo.chunks.length).toBeGreaterThan(bytes / 4_000);
    // Every chunk is a piece of the content, in order, and the last one holds the last sentence.
    let from = 0;
    for (const chunk of memo.chunks) {
      const at = content.indexOf(chunk.chunk_content, Math.max(0, from - 2_000));
      expect(at).toBeGreaterThanOrEqual(0);
      from = at;
    }
    expect(memo.chunks.at(-1)!.chunk_content).toContain(lastSentence);
    expect(memo.summary.length).toBeGreaterThan(0);

    const hits = await search(query);
    expect(hits.results.map((h) => h.memo_uuid)).toContain(id);
    expect(hits.results.find((h) => h.memo_uuid === id)!.chunk_content).toContain(lastSentence);
    noCrash();
    return id;
  }

  it('round-trips a 5 MiB memo byte for byte and finds its last sentence; a 600 KB GET does not crash anything', async () => {
    // Above the old ~510 KB reply limit, where GET used to crash-loop the memo service.
    await roundTrip('600 KB', 600 * 1024, 'The periwinkle harbourmaster counts seventeen lanterns.', 'periwinkle harbourmaster lanterns', 60_000);
    await roundTrip('5 MiB', 5 * MiB, 'The zephyrine quokka keeps the lighthouse ledger.', 'zephyrine quokka lighthouse ledger', 180_000);
  }, 300_000);

  it('accepts a 16 MiB memo, chunks, embeds and searches all of it', async () => {
    await roundTrip('16 MiB', 16 * MiB - 1024, 'Marmalade cartographers chart the obsidian fjord.', 'marmalade cartographers obsidian fjord', 420_000);
  }, 600_000);

  it('refuses content above the limit with 413 {error}', async () => {
    const over = await api<{ error: string }>('POST', '/api/v1/memo', { title: 'too big', content: 'x'.repeat(16 * MiB + 1) });
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: expect.any(String) });
  }, 60_000);

  it('answers a streamed 64 MiB body with a 413 the client can read while it is still sending', async () => {
    const url = new URL(stack.base);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: stack.ca, servername: 'localhost' });
      let received = '';
      socket.on('data', (d: Buffer) => {
        received += d.toString('latin1');
        // The whole answer is in: stop sending and hang up.
        if (/\r\n\r\n[\s\S]*\}/.test(received)) {
          socket.destroy();
          resolve(received);
        }
      });
      // What a client sees matters: the answer must arrive before any reset.
      socket.on('error', (error) => (received.includes('413') ? resolve(received) : reject(error)));
      socket.on('close', () => resolve(received));
      socket.once('secureConnect', async () => {
        const size = 64 * MiB;
        socket.write(
          `POST /api/v1/memo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${stack.key}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
        );
        const piece = Buffer.alloc(MiB, 'x');
        socket.write('{"title":"huge","content":"');
        for (let sent = 0; sent < size - 64 && !socket.destroyed && !received.includes('\r\n\r\n'); sent += piece.length) {
          if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r));
        }
        // Keep the socket open until the server answers and closes.
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(JSON.parse(body.trim().split('\r\n').find((l) => l.startsWith('{'))!)).toEqual({ error: 'Request body is too large' });
    noCrash();
  }, 120_000);
});
