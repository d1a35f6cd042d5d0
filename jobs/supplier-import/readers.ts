import { createReadStream } from 'node:fs';
import { open as openFile, readFile } from 'node:fs/promises';
import { parse as parseCsvSync } from 'csv-parse/sync';
import type ExcelJS from 'exceljs';
import { lazyRequire } from '../../lib/lazy-require.js';
import * as yauzl from 'yauzl';
import { decodeText, detectDelimiter, detectKind, ImportFileError, MAX_ROWS, type ImportKind } from './rows.js';

/** exceljs (about 600 modules with lodash and jszip) loads only for an XLSX file. */
const exceljs = lazyRequire<typeof ExcelJS>('exceljs');

/**
 * File readers of the supplier import (issue 16 item 6): each yields the records of a file as
 * arrays of cells, header row first. Runs inside the sandboxed `parse` child.
 */

/** csv-parse record cap (bytes). */
export const MAX_RECORD_BYTES = 64 * 1024;
/** XLSX limits checked with yauzl before exceljs reads it. */
export const MAX_UNPACKED_BYTES = 100 * 1024 * 1024;
export const MAX_ZIP_RATIO = 100;
/** Most PDF pages read. */
export const MAX_PDF_PAGES = 200;

/**
 * The type of a stored file by its first 512 bytes.
 * @throws ImportFileError (empty, binary)
 */
export async function kindOfFile(path: string): Promise<ImportKind> {
  const fh = await openFile(path, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, 512, 0);
    return detectKind(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

/** Records handed over at a time (a batch: one await per batch, not per record). */
export const BATCH = 1000;

/**
 * Records of a CSV/TXT file, in batches: UTF-8 else Windows-1252, delimiter detected, 64 KB record
 * cap. The text is parsed at once by csv-parse's synchronous API (the whole file is in memory
 * anyway, at most 20 MB; per-record async iteration cost 0.1 s of 50,000 rows), stopping after
 * MAX_CSV_RECORDS records.
 * @throws ImportFileError (unreadable CSV; more records than MAX_CSV_RECORDS: more than 50,000 rows)
 */
export async function* csvRecords(path: string): AsyncGenerator<unknown[][]> {
  const text = decodeText(await readFile(path));
  let records: unknown[][];
  try {
    records = parseCsvSync(text, {
      delimiter: detectDelimiter(text),
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: MAX_RECORD_BYTES,
      to: MAX_CSV_RECORDS + 1,
    }) as unknown[][];
  } catch (err) {
    throw new ImportFileError(`unreadable CSV: ${(err as Error).message}`);
  }
  if (records.length > MAX_CSV_RECORDS) throw new ImportFileError(`more than ${MAX_ROWS} rows`);
  for (let i = 0; i < records.length; i += BATCH) yield records.slice(i, i + BATCH);
}

/**
 * Most records read from a CSV: the header, 50,000 rows and as many blank-celled records (",,,"),
 * which are dropped; a file with more is refused as having more than 50,000 rows.
 */
export const MAX_CSV_RECORDS = 2 * MAX_ROWS + 1;

/**
 * Checks a ZIP's central directory: unpacked total <= 100 MB and every entry's ratio <= 100:1.
 * @throws ImportFileError for a zip bomb or a truncated/corrupt archive
 */
export function checkZip(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(new ImportFileError(`corrupt or truncated XLSX: ${err.message}`));
      let total = 0;
      zip.on('error', (e: Error) => reject(new ImportFileError(`corrupt or truncated XLSX: ${e.message}`)));
      zip.on('entry', (e: yauzl.Entry) => {
        total += e.uncompressedSize;
        const ratio = e.uncompressedSize / Math.max(1, e.compressedSize);
        if (total > MAX_UNPACKED_BYTES || ratio > MAX_ZIP_RATIO) {
          zip.close();
          return reject(new ImportFileError('XLSX refused: unpacks to more than 100 MB or a ratio above 100:1'));
        }
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.readEntry();
    });
  });
}

/** Cell value of exceljs as plain text/number (rich text, formulas' results, dates). */
function cellValue(v: ExcelJS.CellValue): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object') {
    if (v instanceof Date) return v.toISOString().slice(0, 10);
    if ('richText' in v) return v.richText.map((t) => t.text).join('');
    if ('result' in v) return cellValue(v.result as ExcelJS.CellValue);
    if ('text' in v) return String(v.text);
    if ('error' in v) return null;
  }
  return v;
}

/**
 * Loads exceljs (about 600 modules: 0.3-0.6 s of CPU) ahead of the first XLSX, so that a price
 * list's preview is not charged for it. Never throws.
 */
export function warmUpXlsx(): void {
  try {
    exceljs();
  } catch {
    /* the real read reports what is wrong */
  }
}

/** Records of the first worksheet of an XLSX in batches, streamed by exceljs after the zip check. */
export async function* xlsxRecords(path: string): AsyncGenerator<unknown[][]> {
  await checkZip(path);
  const reader = new (exceljs().stream.xlsx.WorkbookReader)(createReadStream(path), {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    worksheets: 'emit',
  });
  try {
    for await (const sheet of reader) {
      let batch: unknown[][] = [];
      for await (const row of sheet as AsyncIterable<ExcelJS.Row>) {
        const vals = row.values as ExcelJS.CellValue[];
        batch.push(vals.slice(1).map(cellValue));
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length) yield batch;
      return; // first sheet only
    }
  } catch (err) {
    if (err instanceof ImportFileError) throw err;
    throw new ImportFileError(`corrupt or truncated XLSX: ${(err as Error).message}`);
  }
}

/**
 * Records of a PDF: pdf-parse getTable() rows when it finds tables, else text lines whose cells
 * are pdfjs's text items (best effort: an empty cell draws nothing, so later cells shift left).
 * More than 200 pages, encrypted or unreadable -> ImportFileError.
 */
export async function* pdfRecords(path: string): AsyncGenerator<unknown[][]> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: new Uint8Array(await readFile(path)) });
  try {
    let info;
    try {
      info = await parser.getInfo();
    } catch (err) {
      const msg = (err as Error).message ?? '';
      if (/password|encrypt/i.test(msg) || (err as Error).name === 'PasswordException') {
        throw new ImportFileError('encrypted PDF');
      }
      throw new ImportFileError(`unreadable PDF: ${msg}`);
    }
    if (info.total > MAX_PDF_PAGES) throw new ImportFileError(`PDF has ${info.total} pages (at most 200)`);
    const tables = await parser.getTable();
    const rows: string[][] = tables.pages.flatMap((p) => p.tables.flat(1));
    if (rows.length > 1) {
      yield rows;
      return;
    }
    // each text item of pdfjs (a string drawn at one place: a cell) joined by U+0001; the blank
    // items pdfjs puts between them are dropped, so a line's cells are its non-blank items
    const text = await parser.getText({ itemJoiner: '\u0001' });
    const lines: string[][] = [];
    for (const line of text.text.split(/\r?\n/)) {
      const cells = line
        .split('\u0001')
        .flatMap((c) => c.split('\t'))
        .map((c) => c.trim())
        .filter((c) => c !== '');
      if (!cells.length || /^-- \d+ of \d+ --$/.test(cells.join(' '))) continue;
      lines.push(cells);
    }
    yield lines;
  } catch (err) {
    if (err instanceof ImportFileError) throw err;
    throw new ImportFileError(`unreadable PDF: ${(err as Error).message}`);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

/** A one-page PDF without content (warmUpPdf). */
const EMPTY_PDF =
  '%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n' +
  '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>\nendobj\ntrailer\n<< /Size 4 /Root 1 0 R >>\n%%EOF\n';

/**
 * Loads pdf-parse and pdfjs's worker code by reading an empty PDF (seconds on a loaded machine),
 * so that the first PDF's time limit is spent on the file. Never rejects.
 */
export async function warmUpPdf(): Promise<void> {
  try {
    const { PDFParse } = await import('pdf-parse');
    const parser = new PDFParse({ data: new Uint8Array(Buffer.from(EMPTY_PDF, 'latin1')) });
    await parser.getText().catch(() => undefined);
    await parser.destroy().catch(() => undefined);
  } catch {
    /* the real parse reports what is wrong */
  }
}

/** The records of a file by its detected type, in batches (arrays of records). */
export async function* fileRecords(path: string): AsyncGenerator<unknown[][]> {
  const kind = await kindOfFile(path);
  if (kind === 'xlsx') yield* xlsxRecords(path);
  else if (kind === 'pdf') yield* pdfRecords(path);
  else yield* csvRecords(path);
}
