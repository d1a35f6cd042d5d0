/**
 * The baselines of `npm run bench -- supplier-import` (issue 16 item 6, "Baseline, same run:
 * csv-parse and the exceljs reader alone"): each reads a price list with the library alone and
 * answers rows/s. Run as a script (`node --import tsx bench/supplier-baseline.ts csv|xlsx <file>`)
 * it loads the library, then times one read in a fresh process, as cold as the preview's first
 * read in the sandboxed child, and prints the rate.
 */
import { createReadStream } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parse as parseCsv } from 'csv-parse';
import ExcelJS from 'exceljs';

/** csv-parse's streaming parser over the file: data rows per second (header excluded). */
export async function csvBaseline(file: string): Promise<number> {
  const t = performance.now();
  let n = 0;
  for await (const _ of createReadStream(file).pipe(parseCsv({ relax_column_count: true }))) n++;
  return (n - 1) / ((performance.now() - t) / 1000);
}

/** exceljs's streaming WorkbookReader over the first worksheet: data rows per second. */
export async function xlsxBaseline(file: string): Promise<number> {
  const t = performance.now();
  let n = 0;
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(createReadStream(file), {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    worksheets: 'emit',
  });
  for await (const sheet of reader) {
    for await (const _ of sheet as AsyncIterable<ExcelJS.Row>) n++;
    break;
  }
  return (n - 1) / ((performance.now() - t) / 1000);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [kind, file] = process.argv.slice(2);
  const rate = await (kind === 'xlsx' ? xlsxBaseline(file) : csvBaseline(file));
  console.log(String(rate));
}
