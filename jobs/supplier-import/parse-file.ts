import { fileRecords } from './readers.js';
import { buildRow, ImportFileError, isBlankRecord, mapHeaders, MAX_ROWS, type ImportRow } from './rows.js';

/** Rows of a file before matching, with the duplicates (same sku, else same name) marked. */
export interface ParsedFile {
  rows: ImportRow[];
  /** Row numbers that repeat an earlier row's sku (or name when no sku); they are skipped. */
  duplicates: Set<number>;
}

/**
 * Reads a stored price list: header row mapped by aliases, blank records dropped, each row checked.
 * @param path local path of the upload
 * @param onProgress called every 1,000 rows with the count read so far
 * @throws ImportFileError (type, no name column, more than 50,000 rows, reader refusals)
 */
export async function parseFile(path: string, onProgress?: (rows: number) => void): Promise<ParsedFile> {
  let map: ReturnType<typeof mapHeaders> | null = null;
  const rows: ImportRow[] = [];
  const duplicates = new Set<number>();
  const seen = new Set<string>();
  for await (const batch of fileRecords(path)) {
    for (const rec of batch) {
      if (isBlankRecord(rec)) continue;
      if (map === null) {
        map = mapHeaders(rec.map((c) => (c === null || c === undefined ? '' : String(c))));
        continue;
      }
      if (rows.length >= MAX_ROWS) throw new ImportFileError(`more than ${MAX_ROWS} rows`);
      const row = buildRow(rec, map, rows.length + 1);
      const key = row.sku ? `s:${row.sku.toLowerCase()}` : `n:${row.name.toLowerCase()}`;
      if (row.valid) {
        if (seen.has(key)) duplicates.add(row.row);
        seen.add(key);
      }
      rows.push(row);
      if (onProgress && rows.length % 1000 === 0) onProgress(rows.length);
    }
  }
  if (map === null) throw new ImportFileError('the file has no header row');
  return { rows, duplicates };
}
