/**
 * Supplier price-list rows (issue 16 item 6; admin-api.md "Supplier import item"): file type by
 * content, text decoding, delimiter detection, header aliases and the per-row limits. Pure
 * functions: the sandboxed `parse` job and the import route share them.
 */

/** The fields of a supplier import item, in the spec's order. */
export const IMPORT_FIELDS = ['name', 'sku', 'category', 'unit', 'cost_price', 'sell_price', 'notes'] as const;
/** One of IMPORT_FIELDS. */
export type ImportField = (typeof IMPORT_FIELDS)[number];

/** Maximum lengths of the text fields (admin-api.md "Supplier import item"). */
export const FIELD_MAX: Record<'name' | 'sku' | 'category' | 'unit' | 'notes', number> = {
  name: 150,
  sku: 80,
  category: 100,
  unit: 20,
  notes: 500,
};

/** The largest price a numeric(14,2) column holds. */
export const MAX_PRICE = 999_999_999_999.99;

/** Most data rows one file may hold; the 50,001st fails the file. */
export const MAX_ROWS = 50_000;

/** Header texts (lower-cased, spaces/underscores/dashes collapsed) accepted for each field. */
const ALIASES: Record<ImportField, string[]> = {
  name: ['name', 'nama', 'nama barang', 'nama item', 'item', 'item name', 'product', 'produk', 'description'],
  sku: ['sku', 'kode', 'kode barang', 'code', 'item code', 'part number', 'part no'],
  category: ['category', 'kategori'],
  unit: ['unit', 'satuan', 'uom'],
  cost_price: ['cost price', 'cost', 'buy price', 'purchase price', 'harga beli', 'harga modal', 'harga'],
  sell_price: ['sell price', 'price', 'harga jual', 'selling price'],
  notes: ['notes', 'note', 'catatan', 'keterangan', 'remarks'],
};

const HEADER_INDEX = new Map<string, ImportField>();
for (const field of IMPORT_FIELDS) for (const alias of ALIASES[field]) HEADER_INDEX.set(alias, field);

/** A header cell normalised for lookup: lower case, `_`/`-`/repeated blanks -> one space, trimmed. */
export function normaliseHeader(text: string): string {
  return text
    .replace(/^\uFEFF/, '')
    .toLowerCase()
    .replace(/[_\-.:]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Maps a header row to fields by the spec names and their aliases.
 * @param headers the header cells, in column order
 * @returns column index per field (first match wins; unknown columns ignored)
 * @throws ImportFileError when no column maps to `name`
 */
export function mapHeaders(headers: readonly string[]): Partial<Record<ImportField, number>> {
  const map: Partial<Record<ImportField, number>> = {};
  headers.forEach((h, i) => {
    const field = HEADER_INDEX.get(normaliseHeader(String(h ?? '')));
    if (field && map[field] === undefined) map[field] = i;
  });
  if (map.name === undefined) throw new ImportFileError('no name column (name or nama) in the header row');
  return map;
}

/** A file-level refusal: the API answers 422 errors.file with this message; the job fails without retry. */
export class ImportFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportFileError';
  }
}

/** The type of an uploaded file, by its first bytes (never its name). */
export type ImportKind = 'text' | 'xlsx' | 'pdf';

/**
 * Detects the file type by content: `%PDF-` -> pdf, a ZIP local header -> xlsx, text without NUL or
 * control bytes -> text.
 * @param head the first bytes of the file (>= 512 when the file has them)
 * @throws ImportFileError for an empty file or binary content
 */
export function detectKind(head: Buffer): ImportKind {
  if (head.length === 0) throw new ImportFileError('the file is empty');
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'xlsx';
  for (const b of head) {
    if (b === 0 || (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c)) {
      throw new ImportFileError('unsupported file type: expected CSV, TXT, XLSX or PDF');
    }
  }
  return 'text';
}

/**
 * Decodes text as UTF-8 (BOM dropped), else as Windows-1252.
 * @param buf the whole text file
 */
export function decodeText(buf: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf);
  } catch {
    return new TextDecoder('windows-1252').decode(buf);
  }
}

/**
 * Picks the delimiter of a CSV/TXT file from its first line: the most frequent of `,` `;` tab `|`
 * outside double quotes (`,` when none).
 * @param text the decoded text (only up to the first line break is read)
 */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
    ['|', 0],
  ]);
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  let max = 0;
  for (const [d, n] of counts) if (n > max) [best, max] = [d, n];
  return best;
}

/** One parsed row as the preview shows it. */
export interface ImportRow {
  /** 1-based data row number in the file (header excluded). */
  row: number;
  name: string;
  sku: string | null;
  category: string | null;
  unit: string | null;
  /** Decimal text, or null when absent. */
  cost_price: string | null;
  sell_price: string | null;
  notes: string | null;
  valid: boolean;
  /** Field -> message, empty when valid. */
  errors: Record<string, string>;
}

/** Digits with at most two decimals after a dot: never a thousands-separated number. */
const PLAIN_DECIMAL = /^\d+(\.\d{1,2})?$/;

/**
 * Reads a price cell: numbers as they are; text with Indonesian or English separators
 * ("Rp 1.250.000", "1,250.50", "1250,5") to a plain decimal.
 * @returns the decimal text, null when blank, undefined when not a number
 */
export function parsePrice(cell: unknown): string | null | undefined {
  if (cell === null || cell === undefined) return null;
  if (typeof cell === 'number') return Number.isFinite(cell) ? String(cell) : undefined;
  // the common plain decimal ("1250", "1250.5"): what the general path below gives it unchanged
  if (typeof cell === 'string' && PLAIN_DECIMAL.test(cell)) return cell;
  let s = String(cell)
    .replace(/^\s*(rp\.?|idr)\s*/i, '')
    .replace(/\s/g, '');
  if (s === '') return null;
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  if (lastDot >= 0 && lastComma >= 0) {
    const dec = lastDot > lastComma ? '.' : ',';
    const thou = dec === '.' ? ',' : '.';
    s = s.split(thou).join('').replace(dec, '.');
  } else if (lastComma >= 0) {
    s = /^-?\d{1,3}(,\d{3})+$/.test(s) ? s.replace(/,/g, '') : s.replace(',', '.');
  } else if (/^-?\d{1,3}(\.\d{3}){2,}$/.test(s) || /^-?\d{1,3}\.\d{3}$/.test(s)) {
    s = s.replace(/\./g, '');
  }
  if (!/^-?\d+(\.\d+)?$/.test(s)) return undefined;
  return s;
}

/**
 * Builds a row from raw cells and checks the spec limits: name required <= 150, sku 80, category
 * 100, unit 20, notes 500, prices numbers >= 0 (two decimals at most).
 * @param cells the raw cells of one record
 * @param map column index per field (mapHeaders)
 * @param rowNo 1-based data row number
 */
export function buildRow(
  cells: readonly unknown[],
  map: Partial<Record<ImportField, number>>,
  rowNo: number,
): ImportRow {
  // module-level helpers, not closures: a closure per field per row cost 50,000 function objects
  // (and tsx's name helper on each) in a 50,000-row file
  const errors: Record<string, string> = {};
  const name = cellText(cells, map, 'name', errors);
  if (name === null) errors.name = 'is required';
  const row: ImportRow = {
    row: rowNo,
    name: name ?? '',
    sku: cellText(cells, map, 'sku', errors),
    category: cellText(cells, map, 'category', errors),
    unit: cellText(cells, map, 'unit', errors),
    cost_price: cellPrice(cells, map, 'cost_price', errors),
    sell_price: cellPrice(cells, map, 'sell_price', errors),
    notes: cellText(cells, map, 'notes', errors),
    valid: false,
    errors,
  };
  row.valid = Object.keys(errors).length === 0;
  return row;
}

/** A text field of a record: trimmed, null when blank; too long -> an error under its name. */
function cellText(
  cells: readonly unknown[],
  map: Partial<Record<ImportField, number>>,
  f: keyof typeof FIELD_MAX,
  errors: Record<string, string>,
): string | null {
  const i = map[f];
  const raw = i === undefined ? null : cells[i];
  const s = raw === null || raw === undefined ? '' : String(raw).trim();
  if (s.length > FIELD_MAX[f]) errors[f] = `must be at most ${FIELD_MAX[f]} characters`;
  return s === '' ? null : s;
}

/** A price field of a record as decimal text (null when blank); refusals -> an error under its name. */
function cellPrice(
  cells: readonly unknown[],
  map: Partial<Record<ImportField, number>>,
  f: 'cost_price' | 'sell_price',
  errors: Record<string, string>,
): string | null {
  const i = map[f];
  const v = parsePrice(i === undefined ? null : cells[i]);
  if (v === undefined) errors[f] = 'must be a number';
  else if (v !== null && v.startsWith('-')) errors[f] = 'must be at least 0';
  else if (v !== null && /\.\d{3,}$/.test(v)) errors[f] = 'must have at most 2 decimals';
  else if (v !== null && Number(v) > MAX_PRICE) errors[f] = `must be at most ${MAX_PRICE}`;
  return v ?? null;
}

/** True when every cell of a record is blank (such rows are dropped, not counted). */
export function isBlankRecord(cells: readonly unknown[]): boolean {
  return cells.every((c) => c === null || c === undefined || String(c).trim() === '');
}
