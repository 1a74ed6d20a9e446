/**
 * Uploaded documents: the formats Memex extracts, and the type check the gateway runs before it
 * stores a file. The bytes decide (magic numbers, the entries of a ZIP container); the file name's
 * extension must agree with them, so a renamed executable or a PDF called `.docx` is refused.
 */
import { MemexError } from './errors';

export const DOCUMENT_FORMATS = ['pdf', 'docx', 'pptx', 'xlsx', 'odt', 'doc', 'html', 'markdown', 'text'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** The content type a stored file is served with. */
export const FORMAT_MIMETYPES: Record<DocumentFormat, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  odt: 'application/vnd.oasis.opendocument.text',
  doc: 'application/msword',
  html: 'text/html; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  text: 'text/plain; charset=utf-8',
};

const EXTENSIONS: Record<string, DocumentFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  odt: 'odt',
  doc: 'doc',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  md: 'markdown',
  markdown: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  csv: 'text',
  tsv: 'text',
};

const TEXT_FORMATS: ReadonlySet<DocumentFormat> = new Set(['html', 'markdown', 'text']);

/** Blob name of a memo's uploaded original; `attempt` keeps a retried upload from overwriting another's bytes. */
export function fileBlobName(projectId: string, memoId: string, attempt: string): string {
  return `files/${projectId}/${memoId}/${attempt}`;
}

export function extensionOf(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function startsWith(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  return signature.every((b, i) => bytes[at + i] === b);
}

const PDF = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const OLE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
/** Signatures of common files Memex does not take, so they are named in the refusal. */
const OTHER_BINARIES: { name: string; signature: number[] }[] = [
  { name: 'PNG image', signature: [0x89, 0x50, 0x4e, 0x47] },
  { name: 'JPEG image', signature: [0xff, 0xd8, 0xff] },
  { name: 'GIF image', signature: [0x47, 0x49, 0x46, 0x38] },
  { name: 'gzip archive', signature: [0x1f, 0x8b] },
  { name: 'executable', signature: [0x7f, 0x45, 0x4c, 0x46] },
  { name: 'executable', signature: [0x4d, 0x5a] },
];

/**
 * Names of a ZIP archive's entries, read from its central directory (no inflation). Undefined when
 * the directory cannot be found or read: the file is not a well-formed ZIP.
 */
export function zipEntryNames(bytes: Uint8Array, max = 10_000): string[] | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // End of central directory: 22 bytes + a comment of up to 65,535 bytes, at the end.
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= lowest; i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const count = view.getUint16(eocd + 10, true);
  let offset = view.getUint32(eocd + 16, true);
  const names: string[] = [];
  const decoder = new TextDecoder();
  for (let n = 0; n < Math.min(count, max); n++) {
    if (offset + 46 > bytes.length || view.getUint32(offset, true) !== 0x02014b50) return undefined;
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    if (offset + 46 + nameLength > bytes.length) return undefined;
    names.push(decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength)));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

function zipFormat(bytes: Uint8Array): DocumentFormat | undefined {
  // ODF keeps an uncompressed `mimetype` entry first, so its value sits at a fixed offset.
  const head = new TextDecoder().decode(bytes.subarray(30, 120));
  if (head.startsWith('mimetypeapplication/vnd.oasis.opendocument.text')) return 'odt';
  const names = zipEntryNames(bytes);
  if (!names) return undefined;
  const has = new Set(names);
  if (has.has('word/document.xml')) return 'docx';
  if (has.has('ppt/presentation.xml')) return 'pptx';
  if (has.has('xl/workbook.xml')) return 'xlsx';
  if (has.has('content.xml') && has.has('mimetype')) return 'odt';
  return undefined;
}

/** True when the bytes read as UTF-8 text (no NUL bytes, no invalid sequences) in the sample. */
function looksLikeText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 64 * 1024);
  if (sample.includes(0)) return false;
  try {
    // A multi-byte sequence cut by the sample's end is not an error of the file.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: sample.length < bytes.length });
    return true;
  } catch {
    return false;
  }
}

function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 1024)).trimStart().toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html') || (head.startsWith('<?xml') && head.includes('<html'));
}

export interface SniffedFile {
  format: DocumentFormat;
  mimetype: string;
}

/**
 * Decides a file's format from its bytes and checks that its name agrees. Throws `EmptyFile` (400),
 * `UnsupportedFileType` (415) or `FileTypeMismatch` (415).
 */
export function sniffFileType(bytes: Uint8Array, filename: string): SniffedFile {
  if (bytes.length === 0) throw new MemexError('EmptyFile');
  const ext = extensionOf(filename);
  const claimed: DocumentFormat | undefined = EXTENSIONS[ext];
  if (ext !== '' && claimed === undefined) throw new MemexError('UnsupportedFileType', `.${ext}`);

  let actual: DocumentFormat | undefined;
  if (startsWith(bytes, PDF) || (bytes.length > 5 && new TextDecoder().decode(bytes.subarray(0, 1024)).includes('%PDF-') && claimed === 'pdf')) {
    actual = 'pdf';
  } else if (startsWith(bytes, ZIP)) {
    actual = zipFormat(bytes);
    if (!actual) {
      if (claimed && !TEXT_FORMATS.has(claimed) && claimed !== 'pdf' && claimed !== 'doc') {
        throw new MemexError('UnsupportedFileType', `the file is not a readable ${claimed.toUpperCase()} document`);
      }
      throw new MemexError('UnsupportedFileType', 'a ZIP archive that is not an Office or OpenDocument file');
    }
  } else if (startsWith(bytes, OLE)) {
    // Legacy Office compound files: only Word's .doc is read.
    if (claimed !== 'doc') throw new MemexError('UnsupportedFileType', 'legacy Office files other than .doc');
    actual = 'doc';
  } else {
    const other = OTHER_BINARIES.find((b) => startsWith(bytes, b.signature));
    if (other) throw new MemexError('UnsupportedFileType', other.name);
    if (!looksLikeText(bytes)) throw new MemexError('UnsupportedFileType', 'binary data of an unknown kind');
    if (claimed && TEXT_FORMATS.has(claimed)) actual = claimed;
    else if (claimed) throw new MemexError('FileTypeMismatch', `.${ext} but the content is text`);
    else actual = looksLikeHtml(bytes) ? 'html' : 'text';
  }
  if (claimed !== undefined && claimed !== actual && !(TEXT_FORMATS.has(claimed) && TEXT_FORMATS.has(actual))) {
    throw new MemexError('FileTypeMismatch', `.${ext} but the content is ${actual.toUpperCase()}`);
  }
  return { format: actual, mimetype: FORMAT_MIMETYPES[actual] };
}
