import { describe, expect, it } from 'vitest';
import { MemexError } from './errors';
import { sniffFileType, zipEntryNames } from './files';

function refusal(bytes: Uint8Array, name: string): MemexError {
  try {
    sniffFileType(bytes, name);
  } catch (error) {
    expect(error).toBeInstanceOf(MemexError);
    return error as MemexError;
  }
  throw new Error(`${name} was accepted`);
}

/** A stored (uncompressed) ZIP with the given entry names, enough for the central directory. */
function zipWith(names: string[]): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const n of names) {
    const name = Buffer.from(n);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(names.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, dir, end]);
}

describe('sniffFileType', () => {
  it('reads the format from the bytes, and the ZIP subtype from the entries', () => {
    expect(sniffFileType(Buffer.from('%PDF-1.7\n...'), 'a.pdf').format).toBe('pdf');
    expect(sniffFileType(zipWith(['[Content_Types].xml', 'word/document.xml']), 'a.docx').format).toBe('docx');
    expect(sniffFileType(zipWith(['ppt/presentation.xml']), 'a.pptx').format).toBe('pptx');
    expect(sniffFileType(zipWith(['xl/workbook.xml']), 'a.xlsx').format).toBe('xlsx');
    expect(sniffFileType(zipWith(['mimetype', 'content.xml']), 'a.odt').format).toBe('odt');
    expect(sniffFileType(Buffer.from('# Title\n\ntext'), 'notes.md').format).toBe('markdown');
    expect(sniffFileType(Buffer.from('<!DOCTYPE html><p>x'), 'page.htm').format).toBe('html');
    expect(sniffFileType(Buffer.from('<!doctype html><p>x'), 'noext').format).toBe('html');
    expect(sniffFileType(Buffer.from('just words, ünïcödé'), 'notes').format).toBe('text');
    expect(sniffFileType(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0]), 'old.doc').format).toBe('doc');
  });

  it('gives the content type the file is served with', () => {
    expect(sniffFileType(Buffer.from('%PDF-1.4'), 'x.pdf').mimetype).toBe('application/pdf');
    expect(sniffFileType(Buffer.from('hi'), 'x.txt').mimetype).toBe('text/plain; charset=utf-8');
  });

  it('refuses an empty file with 400', () => {
    const e = refusal(new Uint8Array(0), 'a.pdf');
    expect([e.code, e.status]).toEqual(['EmptyFile', 400]);
  });

  it('refuses a name that disagrees with the bytes with 415 (magic bytes decide, not the extension)', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
    expect(refusal(png, 'photo.pdf')).toMatchObject({ code: 'UnsupportedFileType', status: 415, message: 'Unsupported file type: PNG image' });
    expect(refusal(Buffer.from('%PDF-1.4 ...'), 'report.docx')).toMatchObject({ code: 'FileTypeMismatch', status: 415 });
    expect(refusal(zipWith(['word/document.xml']), 'report.pdf').code).toBe('FileTypeMismatch');
    expect(refusal(Buffer.from('plain words'), 'report.pdf').code).toBe('FileTypeMismatch');
  });

  it('refuses unknown extensions, binaries, other ZIPs and legacy Office files other than .doc', () => {
    expect(refusal(Buffer.from('x'), 'run.exe').message).toBe('Unsupported file type: .exe');
    expect(refusal(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]), 'prog').code).toBe('UnsupportedFileType');
    expect(refusal(Buffer.from([1, 2, 0, 4, 0xff, 0xfe]), 'blob').code).toBe('UnsupportedFileType');
    expect(refusal(zipWith(['src/main.c']), 'code.zip').code).toBe('UnsupportedFileType');
    expect(refusal(zipWith(['src/main.c']), 'fake.docx').message).toMatch(/not a readable DOCX/);
    expect(refusal(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), 'sheet.xls').code).toBe('UnsupportedFileType');
    expect(refusal(Buffer.from('%PDF-'), 'x.pdf.gz').code).toBe('UnsupportedFileType');
  });

  it('reads entry names from the central directory, undefined when there is none', () => {
    expect(zipEntryNames(zipWith(['a', 'b/c']))).toEqual(['a', 'b/c']);
    expect(zipEntryNames(Buffer.from('PK\x03\x04 not really'))).toBeUndefined();
  });
});
