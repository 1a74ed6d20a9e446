/**
 * Real documents for tests and benchmarks, made by independent tools from one Markdown source:
 * pandoc writes DOCX, PPTX, ODT and HTML; headless Chromium prints the HTML to PDF; exceljs
 * writes the XLSX. Every file carries sentences and table cells the tests look for.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the tests need and lack, or undefined when pandoc and Chromium are both here. */
export function missingTools(): string | undefined {
  if (spawnSync('pandoc', ['--version'], { stdio: 'ignore' }).status !== 0) return 'pandoc is not installed';
  if (spawnSync(CHROMIUM, ['--version'], { stdio: 'ignore' }).status !== 0) return `no Chromium at ${CHROMIUM}`;
  return undefined;
}

interface SampleDocument {
  /** A sentence unique to this document, for search. */
  sentence: string;
  /** Table cells the text must keep. */
  cells: string[];
  heading: string;
  markdown: string;
}

/** A document about `topic` whose sentence and cells carry `marker`, so documents tell apart. */
export function sampleDocument(marker: string, topic = 'glacier'): SampleDocument {
  const heading = `Field notes on the ${topic}`;
  const sentence = `The ${marker} survey measured ${topic} retreat along the northern ridge.`;
  const cells = [`${marker}-alpha`, `${marker}-beta`, '4217', '9931'];
  const markdown = [
    `# ${heading}`,
    '',
    sentence,
    '',
    `## Measurements`,
    '',
    'Observers recorded each station twice per season.',
    '',
    '| Station | Reading |',
    '|---|---|',
    `| ${cells[0]} | ${cells[2]} |`,
    `| ${cells[1]} | ${cells[3]} |`,
    '',
    '## Conclusion',
    '',
    'The ice lost mass every year of the record.',
    '',
  ].join('\n');
  return { sentence, cells, heading, markdown };
}

export type GeneratedFormat = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'odt' | 'html' | 'markdown' | 'text';

export const GENERATED_EXTENSIONS: Record<GeneratedFormat, string> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  odt: 'odt',
  html: 'html',
  markdown: 'md',
  text: 'txt',
};

/** Builds `doc` in `format` with the independent tool for it; returns the file's bytes. */
export async function generateDocument(format: GeneratedFormat, doc: SampleDocument): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'memex-doc-'));
  try {
    const md = join(dir, 'source.md');
    writeFileSync(md, doc.markdown);
    const out = join(dir, `out.${GENERATED_EXTENSIONS[format]}`);
    switch (format) {
      case 'markdown':
        return Buffer.from(doc.markdown);
      case 'text':
        return Buffer.from(
          `${doc.heading}\n\n${doc.sentence}\n\nStation\tReading\n${doc.cells[0]}\t${doc.cells[2]}\n${doc.cells[1]}\t${doc.cells[3]}\n`,
        );
      case 'docx':
      case 'pptx':
      case 'odt':
        execFileSync('pandoc', [md, '-o', out], { stdio: 'ignore' });
        return readFileSync(out);
      case 'html':
        execFileSync('pandoc', [md, '-s', '--metadata', `title=${doc.heading}`, '-o', out], { stdio: 'ignore' });
        return readFileSync(out);
      case 'pdf': {
        const html = join(dir, 'page.html');
        execFileSync('pandoc', [md, '-s', '--metadata', `title=${doc.heading}`, '-o', html], { stdio: 'ignore' });
        execFileSync(
          CHROMIUM,
          ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(dir, 'profile')}`, `--print-to-pdf=${out}`, html],
          { stdio: 'ignore', timeout: 60_000 },
        );
        return readFileSync(out);
      }
      case 'xlsx': {
        const workbook = new ExcelJS.Workbook();
        const summary = workbook.addWorksheet('Summary');
        summary.addRow([doc.heading]);
        summary.addRow([doc.sentence]);
        const readings = workbook.addWorksheet('Readings');
        readings.addRow(['Station', 'Reading']);
        readings.addRow([doc.cells[0], Number(doc.cells[2])]);
        readings.addRow([doc.cells[1], Number(doc.cells[3])]);
        return Buffer.from(await workbook.xlsx.writeBuffer());
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An XLSX written by exceljs: one sheet per entry, rows of cells. */
export async function xlsxWorkbook(sheets: { name: string; rows: (string | number)[][] }[]): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const { name, rows } of sheets) {
    const sheet = workbook.addWorksheet(name);
    for (const row of rows) sheet.addRow(row);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/**
 * A minimal ZIP container (deflated entries, no CRC check needed by our reader, but a correct
 * layout). Used to build zip bombs: entries of zeros that inflate to far more than they weigh.
 */
export function buildZip(entries: { name: string; data: Buffer; deflate?: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const body = entry.deflate === false ? entry.data : deflateRawSync(entry.data, { level: 6 });
    const method = entry.deflate === false ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A DOCX-shaped zip bomb: `word/document.xml` inflates to `inflatedMb` MB of zeros. */
export function zipBombDocx(inflatedMb: number): Buffer {
  return buildZip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types/>') },
    { name: 'word/document.xml', data: Buffer.alloc(inflatedMb * 1024 * 1024) },
  ]);
}
