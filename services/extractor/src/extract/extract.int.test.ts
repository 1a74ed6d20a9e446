import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { sniffFileType } from '@memex/contracts';
import {
  GENERATED_EXTENSIONS,
  generateDocument,
  missingTools,
  sampleDocument,
  zipBombDocx,
  buildZip,
  type GeneratedFormat,
} from '../testing/documents';
import { DEFAULT_EXTRACT_LIMITS, ExtractionError } from './errors';
import { extractDocument } from './extract';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'testing', 'fixtures');

const missing = missingTools();
const FORMATS: GeneratedFormat[] = ['pdf', 'docx', 'pptx', 'xlsx', 'odt', 'html', 'markdown', 'text'];

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

describe.skipIf(missing)(`extraction of real documents${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const files = new Map<GeneratedFormat, Buffer>();
  const doc = sampleDocument('kestrel');

  beforeAll(async () => {
    for (const format of FORMATS) files.set(format, await generateDocument(format, doc));
  }, 120_000);

  it.each(FORMATS)('%s: the type is recognised from the bytes and the text keeps sentences and table cells', async (format) => {
    const bytes = files.get(format)!;
    const sniffed = sniffFileType(bytes, `report.${GENERATED_EXTENSIONS[format]}`);
    expect(sniffed.format).toBe(format);
    const { text, pages } = await extractDocument(bytes, format, DEFAULT_EXTRACT_LIMITS);
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain(doc.sentence);
    for (const cell of doc.cells) expect(flat).toContain(cell);
    expect(pages).toBeGreaterThanOrEqual(1);
  });

  it.each(['docx', 'odt', 'html', 'pdf'] as const)('%s: headings stay headings and a table row stays one line of cells', async (format) => {
    const { text } = await extractDocument(files.get(format)!, format, DEFAULT_EXTRACT_LIMITS);
    expect(text).toMatch(new RegExp(`^#{1,2} ${doc.heading}$`, 'm'));
    expect(text).toMatch(/^#{1,3} Measurements$/m);
    expect(text).toMatch(new RegExp(`^${doc.cells[0]} \\| ${doc.cells[2]}$`, 'm'));
  });

  it('pptx: each slide is a heading and slide tables keep their rows', async () => {
    const { text, pages } = await extractDocument(files.get('pptx')!, 'pptx', DEFAULT_EXTRACT_LIMITS);
    expect(pages).toBeGreaterThan(1);
    expect(text).toMatch(/^## Slide 1: /m);
    expect(text).toMatch(new RegExp(`^${doc.cells[1]} \\| ${doc.cells[3]}$`, 'm'));
  });

  it('xlsx: every sheet is named and its rows keep their cells in order', async () => {
    const { text, pages } = await extractDocument(files.get('xlsx')!, 'xlsx', DEFAULT_EXTRACT_LIMITS);
    expect(pages).toBe(2);
    expect(text).toMatch(/^## Sheet: Summary$/m);
    expect(text).toMatch(/^## Sheet: Readings$/m);
    expect(text).toContain(`Station | Reading\n${doc.cells[0]} | ${doc.cells[2]}\n${doc.cells[1]} | ${doc.cells[3]}`);
  });

  it('html: scripts, styles and navigation chrome are dropped', async () => {
    const html = Buffer.from(
      '<!doctype html><html><head><title>t</title><style>.x{color:red}</style><script>var secret = 1;</script></head>' +
        '<body><nav>Home | About</nav><header>Site banner</header><main><h1>Main title</h1><p>Body sentence here.</p>' +
        '<p hidden>hidden words</p></main><footer>Copyright</footer><script>alert(2)</script></body></html>',
    );
    const { text } = await extractDocument(html, 'html', DEFAULT_EXTRACT_LIMITS);
    expect(text).toBe('# Main title\n\nBody sentence here.');
  });

  it('a corrupt PDF (truncated) is refused with a reason', async () => {
    const pdf = files.get('pdf')!;
    const error = await failure(extractDocument(pdf.subarray(0, 400), 'pdf', DEFAULT_EXTRACT_LIMITS));
    expect(['corrupt', 'no_text']).toContain(error.failure);
    expect(error.message.length).toBeGreaterThan(10);
  });

  it('a PDF without a text layer is refused as no_text, never stored empty', async () => {
    // A one-page PDF that only draws a rectangle: no text operators at all.
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>',
    ];
    const stream = '0 0 1 rg 10 10 100 100 re f';
    let body = '%PDF-1.4\n';
    const offsets: number[] = [];
    objects.forEach((o, i) => {
      offsets.push(body.length);
      body += `${i + 1} 0 obj\n${o}\nendobj\n`;
    });
    offsets.push(body.length);
    body += `4 0 obj\n<< /Length ${stream.length} >>\nstream\n${stream}\nendstream\nendobj\n`;
    const xref = body.length;
    body += `xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
    body += `trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
    const error = await failure(extractDocument(Buffer.from(body), 'pdf', DEFAULT_EXTRACT_LIMITS));
    expect(error.failure).toBe('no_text');
    expect(error.message).toMatch(/no text layer/);
  });

  it('a zip bomb stops at the inflation budget instead of filling memory', async () => {
    const bomb = zipBombDocx(300);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(sniffFileType(bomb, 'bomb.docx').format).toBe('docx');
    const error = await failure(extractDocument(bomb, 'docx', { ...DEFAULT_EXTRACT_LIMITS, maxInflatedBytes: 64 * 1024 * 1024 }));
    expect(error.failure).toBe('too_large');
    expect(error.message).toMatch(/inflates to more than 64 MB/);
  });

  it('many small entries add up against the same budget', async () => {
    const limits = { ...DEFAULT_EXTRACT_LIMITS, maxInflatedBytes: 1024 * 1024 };
    const xml = (n: number) => `<w:document><w:body>${'<w:p><w:r><w:t>word</w:t></w:r></w:p>'.repeat(n)}</w:body></w:document>`;
    const zip = buildZip([
      { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
      { name: 'word/styles.xml', data: Buffer.from(`<w:styles>${'<w:style w:styleId="a"><w:name w:val="b"/></w:style>'.repeat(12_000)}</w:styles>`) },
      { name: 'word/document.xml', data: Buffer.from(xml(20_000)) },
    ]);
    const error = await failure(extractDocument(zip, 'docx', limits));
    expect(error.failure).toBe('too_large');
  });

  it('deeply nested markup is refused at the depth limit', async () => {
    const html = Buffer.from(`<html><body>${'<div>'.repeat(5_000)}deep${'</div>'.repeat(5_000)}</body></html>`);
    const error = await failure(extractDocument(html, 'html', DEFAULT_EXTRACT_LIMITS));
    expect(error.failure).toBe('too_large');
    expect(error.message).toMatch(/deeper than 256/);
  });

  it('text beyond the content limit is refused, not truncated', async () => {
    const big = Buffer.from('A sentence that repeats. '.repeat(40_000));
    const error = await failure(extractDocument(big, 'text', { ...DEFAULT_EXTRACT_LIMITS, maxTextBytes: 700 * 1024 }));
    expect(error.failure).toBe('too_large');
    expect(error.message).toMatch(/content limit/);
  });

  it('a damaged ZIP container is corrupt, and an empty document has no text', async () => {
    const docx = files.get('docx')!;
    expect((await failure(extractDocument(docx.subarray(0, docx.length - 30), 'docx', DEFAULT_EXTRACT_LIMITS))).failure).toBe('corrupt');
    expect((await failure(extractDocument(Buffer.from('   \n\n  '), 'text', DEFAULT_EXTRACT_LIMITS))).failure).toBe('no_text');
  });

  it('reads a real Word 97 .doc (written by LibreOffice): paragraphs apart, table rows as cells', async () => {
    const doc = readFileSync(join(FIXTURES, 'handbook.doc'));
    // The upload route takes it for what it is by its bytes.
    expect(sniffFileType(doc, 'handbook.doc').format).toBe('doc');
    const { text } = await extractDocument(doc, 'doc', DEFAULT_EXTRACT_LIMITS);
    expect(text).toBe(
      [
        'Harbour handbook',
        'The harbour master assigns berths to arriving ships before dawn.',
        'Pilots board each vessel at the outer buoy.',
        'Crane | Capacity\nNorth gantry | 65 tonnes\nSouth gantry | 40 tonnes',
        'Tugs stand by whenever the wind exceeds thirty knots.',
      ].join('\n\n'),
    );
  });

  it('a .doc that is not a Word compound file is refused as corrupt', async () => {
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(600, 1)]);
    expect((await failure(extractDocument(ole, 'doc', DEFAULT_EXTRACT_LIMITS))).failure).toBe('corrupt');
  });
});
