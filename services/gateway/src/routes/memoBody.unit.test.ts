import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { packChunks, type MemoView } from '@memex/contracts';
import { chunkId } from '@memex/runtime';
import { memoBody } from './memoBody';

const UUID = '01937a4e-1111-7222-8333-444455556666';

/** A memo view whose chunks cut `content` into pieces of `size` characters. */
function view(content: string, size: number): MemoView {
  const cuts: { start: number; end: number }[] = [];
  for (let start = 0; start < content.length; start += size) cuts.push({ start, end: Math.min(content.length, start + size) });
  return {
    uuid: UUID,
    created_at: '2026-11-26T00:00:00.000Z',
    updated_at: '2026-11-26T00:00:00.000Z',
    title: 'A "quoted" title',
    summary: 'Short.',
    content_length: content.length,
    metadata: { k: 'v' },
    client_reference_id: null,
    source: null,
    type: 'text',
    expiration_date: null,
    archived: false,
    pending: false,
    tags: [{ tag: 'x', uuid: '01937a4e-1111-7222-8333-444455556667' }] as MemoView['tags'],
    processing_error: null,
    content_ref: { kind: 'inline' } as unknown as MemoView['content_ref'],
    chunk_revision: 3,
    chunk_layout: packChunks(cuts),
    first_chunk: content.slice(0, size),
  } as MemoView;
}

/** What the body must parse to: the view without its internal fields, with content and chunks. */
function expected(v: MemoView, content: string, size: number): unknown {
  const { content_ref: _ref, chunk_revision: _rev, chunk_layout: _layout, first_chunk: _first, ...rest } = v;
  const chunks = [];
  for (let i = 0, start = 0; start < content.length; i++, start += size) {
    chunks.push({ uuid: chunkId(UUID, 3, i), chunk_content: content.slice(start, start + size), chunk_index: i });
  }
  return { ...rest, content, chunks };
}

async function text(body: string | Readable): Promise<string> {
  if (typeof body === 'string') return body;
  let out = '';
  for await (const piece of body) out += piece as string;
  return out;
}

describe('memoBody', () => {
  it('sends a short memo as one string that parses to the memo', async () => {
    const content = 'Line one.\n"Quoted" \\ backslash, tab\t and an emoji 🙂 at the end 🙂';
    const body = memoBody(view(content, 20), content);
    expect(typeof body).toBe('string');
    expect(JSON.parse(body as string)).toEqual(expected(view(content, 20), content, 20));
  });

  it('streams a long memo, surrogate pairs across slice boundaries included, to the same JSON', async () => {
    // 🙂 is two UTF-16 units: at an odd offset some pair straddles every 64 Ki-character slice edge.
    const content = `x${'🙂 fog signal. '.repeat(20_000)}`;
    const body = memoBody(view(content, 1000), content);
    expect(body).toBeInstanceOf(Readable);
    const json = await text(body);
    expect(json).not.toContain('\\ud83d"');
    expect(JSON.parse(json)).toEqual(expected(view(content, 1000), content, 1000));
  });
});
