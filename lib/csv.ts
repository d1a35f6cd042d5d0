import { Readable, pipeline } from 'node:stream';
import { stringify } from 'csv-stringify';
import { Decimal } from 'decimal.js';

/**
 * Streamed CSV exports (DESIGN.md §10 "CSV exports"): `text/csv; charset=utf-8`, a header row,
 * RFC 4180 quoting, CRLF line ends and a formula-injection guard, written by csv-stringify.
 *
 * Usage in a Koa handler:
 * ```ts
 * ctx.type = CSV_CONTENT_TYPE;
 * ctx.attachment('invoices.csv');          // or ctx.set('Content-Disposition', contentDisposition(...))
 * ctx.body = csvStream(columns, rowsFromACursor());
 * ```
 */

/** The Content-Type of every CSV export. */
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/**
 * A cell value. null/undefined -> empty; numbers and bigints as written (never guarded: a negative
 * amount stays a number); booleans -> "true"/"false"; Date -> ISO 8601; a decimal.js value (Money)
 * -> its plain decimal text; other objects -> JSON.
 */
export type CsvCell = string | number | bigint | boolean | Date | Decimal | null | undefined | object;

/** One output column: its header text and the row field (or a function of the row) it shows. */
export interface CsvColumn<T> {
  header: string;
  value: (keyof T & string) | ((row: T) => CsvCell);
}

/** Options of csvStream. */
export interface CsvOptions {
  /** Prepend a UTF-8 byte order mark (some spreadsheet programs need it to read UTF-8); default false. */
  bom?: boolean;
}

/**
 * Writes rows as CSV into a Node Readable stream, row by row with backpressure: the rows are pulled
 * from `rows` only as fast as the consumer reads, so an export of any size is never held in memory.
 * Format: header row first, RFC 4180 quoting (fields with a comma, double quote, CR or LF are quoted,
 * quotes doubled), CRLF after every record. Formula-injection guard (OWASP "CSV Injection"): a text
 * cell starting with `=`, `+`, `-`, `@`, tab or CR (or their full-width forms) gets a leading `'`;
 * number cells are never changed, so pass amounts as numbers (lib/money.ts toNumber), not text.
 * When the consumer goes away (client disconnect: Koa destroys the body) the iteration of `rows` is
 * stopped (its `return()` runs, closing e.g. a database cursor). An error thrown by `rows` destroys
 * the stream with that error (the response is cut off; the status was already sent).
 * @param columns output columns in order
 * @param rows the records, sync or async iterable (e.g. an async generator over a query cursor)
 * @returns a Readable of UTF-8 CSV bytes, for `ctx.body`
 */
export function csvStream<T>(
  columns: readonly CsvColumn<T>[],
  rows: Iterable<T> | AsyncIterable<T>,
  opts: CsvOptions = {},
): Readable {
  const pick = columns.map((c) => {
    const v = c.value;
    return typeof v === 'function' ? v : (row: T) => row[v] as CsvCell;
  });
  async function* records(): AsyncGenerator<CsvCell[]> {
    for await (const row of rows) yield pick.map((f) => f(row));
  }
  const stringifier = stringify({
    header: true,
    columns: columns.map((c) => c.header),
    record_delimiter: '\r\n',
    // quote any field holding a lone CR or LF too (csv-stringify turns this off once record_delimiter is set)
    quote_record_delimiter: true,
    eof: true,
    escape_formulas: true,
    bom: opts.bom ?? false,
    cast: {
      boolean: (v) => (v ? 'true' : 'false'),
      date: (v) => v.toISOString(),
      bigint: (v) => v.toString(),
      number: (v) => String(v),
      object: (v) => (Decimal.isDecimal(v) ? (v as Decimal).toFixed() : JSON.stringify(v)),
    },
  });
  // pipeline: a consumer that stops destroys the source (ending the rows' iteration), an error in
  // the rows destroys the output with that error
  return pipeline(Readable.from(records(), { objectMode: true }), stringifier, () => {});
}
