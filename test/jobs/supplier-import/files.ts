import ExcelJS from 'exceljs';
import JSZip from 'jszip';

/**
 * Price-list files made at run time for the supplier import tests and the benchmark (no MBs
 * committed): minimal PDFs (text lines, optionally "encrypted", any page count), XLSX and CSV
 * price lists, and a zip bomb named .xlsx.
 */

const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

/**
 * A minimal PDF: one page per entry of `pages`, each line's cells drawn 150 pt apart (text
 * extraction separates them with tabs, as in a printed price list).
 * @param pages page -> lines -> cells
 * @param opts.encrypted adds a Standard security handler whose user password is not empty
 */
export function makePdf(pages: string[][][], opts: { encrypted?: boolean } = {}): Buffer {
  const objs: string[] = [];
  const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ');
  objs.push('<< /Type /Catalog /Pages 2 0 R >>');
  objs.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  objs.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  pages.forEach((lines, i) => {
    const content = lines
      .flatMap((cells, y) =>
        cells.map((c, x) => `BT /F1 10 Tf 1 0 0 1 ${40 + 150 * x} ${800 - 14 * y} Tm (${esc(c)}) Tj ET`),
      )
      .join('\n');
    objs.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`,
    );
    objs.push(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`);
  });
  const hex = (c: string) => c.repeat(64);
  if (opts.encrypted) objs.push(`<< /Filter /Standard /V 1 /R 2 /O <${hex('a')}> /U <${hex('b')}> /P -4 >>`);
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  const enc = opts.encrypted ? ` /Encrypt ${objs.length} 0 R /ID [<${hex('1')}> <${hex('1')}>]` : '';
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R${enc} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A zip whose one entry unpacks 20 MB of zeros (ratio far above 100:1), named like an XLSX. */
export async function zipBomb(): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('xl/worksheets/sheet1.xml', Buffer.alloc(20 * 1024 * 1024));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}

/** One price-list row: name, sku, cost, sell. */
export type PriceRow = [string, string, number, number];

/** `n` price rows: item i has sku `SKU-i`, cost 1000 + i, sell 1500 + i. */
export const priceRows = (n: number, from = 0): PriceRow[] =>
  Array.from({ length: n }, (_, k) => [`Item ${from + k}`, `SKU-${from + k}`, 1000 + from + k, 1500 + from + k]);

/** A CSV price list (spec headers, `,`). */
export function priceCsv(rows: readonly PriceRow[]): Buffer {
  return Buffer.from(['name,sku,cost_price,sell_price', ...rows.map((r) => r.join(','))].join('\n') + '\n');
}

/** An XLSX price list (Indonesian headers), written by exceljs's streaming writer. */
export async function priceXlsx(rows: readonly PriceRow[]): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Harga');
  ws.addRow(['Nama Barang', 'Kode', 'Harga Beli', 'Harga Jual']);
  for (const r of rows) ws.addRow(r);
  return Buffer.from(await wb.xlsx.writeBuffer());
}
