import { Readable } from 'node:stream';
import { unpackChunks, type MemoView } from '@memex/contracts';
import { chunkId } from '@memex/runtime';

/** Pieces of the streamed GET body are gathered up to about this size before they are written. */
const PIECE_CHARS = 64 * 1024;

/** Memos of at most this many characters are sent as one string; longer ones are streamed. */
const WHOLE_BODY_CHARS = PIECE_CHARS / 2;

/**
 * The GET body of a memo (spec 2.1). A long memo's is a stream: the content once, then its chunks
 * one at a time, so a 16 MiB memo, whose chunks repeat its content, never exists as one ~50 MB JSON
 * string. A short memo's (the content and its chunks under ~70 KB of JSON) is one string: one write
 * with a Content-Length, not a chunked write per piece.
 */
export function memoBody(view: MemoView, content: string): string | Readable {
  if (content.length <= WHOLE_BODY_CHARS) return [...pieces(view, content)].join('');
  return Readable.from(pieces(view, content), { objectMode: false, encoding: 'utf8' });
}

function* pieces(view: MemoView, content: string): Generator<string> {
  const { content_ref: _ref, chunk_revision: revision, chunk_layout: layout, first_chunk: _first, ...rest } = view;
  const head = { ...rest, content: '' };
  // Everything but content and chunks, then content in slices (JSON-escaped separately: a slice
  // boundary never falls inside an escape since each slice is stringified whole).
  const headJson = JSON.stringify({ ...head, chunks: [] });
  const cut = headJson.lastIndexOf(',"chunks":[]');
  const [before] = [headJson.slice(0, cut)];
  const contentKey = '"content":""';
  const at = before.lastIndexOf(contentKey);
  yield before.slice(0, at) + '"content":"';
  for (let i = 0; i < content.length; i += PIECE_CHARS) {
    let end = Math.min(content.length, i + PIECE_CHARS);
    // Never split a surrogate pair between two slices.
    if (end < content.length && /[\ud800-\udbff]/.test(content.charAt(end - 1))) end += 1;
    yield JSON.stringify(content.slice(i, end)).slice(1, -1);
    i = end - PIECE_CHARS;
  }
  yield '"' + before.slice(at + contentKey.length) + ',"chunks":[';
  let buffer = '';
  let first = true;
  for (const c of unpackChunks(layout)) {
    buffer += (first ? '' : ',') + JSON.stringify({ uuid: chunkId(view.uuid, revision, c.index), chunk_content: content.slice(c.start, c.end), chunk_index: c.index });
    first = false;
    if (buffer.length >= PIECE_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  yield buffer + ']}';
}
