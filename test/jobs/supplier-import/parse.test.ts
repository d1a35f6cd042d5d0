import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { parseFile } from '../../../jobs/supplier-import/parse-file.js';
import { detectDelimiter, parsePrice, ImportFileError } from '../../../jobs/supplier-import/rows.js';
import { MAX_CSV_RECORDS } from '../../../jobs/supplier-import/readers.js';

describe('supplier import: parsing files (issue 16 item 6)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'supplier-import-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, data: string | Buffer): Promise<string> => {
    const p = join(dir, name);
    await writeFile(p, data);
    return p;
  };
  const refusal = async (p: string): Promise<string> => {
    try {
      await parseFile(p);
    } catch (err) {
      expect(err).to.be.instanceOf(ImportFileError);
      return (err as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('reads a comma CSV with spec headers', async () => {
    const p = await file('a.csv', 'name,sku,cost_price,sell_price\nONT ZTE,ZTE-1,250000,300000\nKabel,,1500.5,\n');
    const { rows, duplicates } = await parseFile(p);
    expect(rows.map((r) => [r.name, r.sku, r.cost_price, r.sell_price, r.valid])).to.deep.equal([
      ['ONT ZTE', 'ZTE-1', '250000', '300000', true],
      ['Kabel', null, '1500.5', null, true],
    ]);
    expect(duplicates.size).to.equal(0);
  });

  it('reads a semicolon TXT with Indonesian aliases and Windows-1252 text', async () => {
    const body = 'Nama;Kode;Harga Beli;Satuan;Catatan\nKabel café;K-1;1.250.000;roll;ok\n';
    const p = await file('b.txt', Buffer.from(body, 'latin1'));
    const { rows } = await parseFile(p);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ name: 'Kabel café', sku: 'K-1', cost_price: '1250000', unit: 'roll', notes: 'ok' });
  });

  it('checks the limits: name 150 passes, 151 fails; negative price; missing name', async () => {
    const csv = `name,cost_price\n${'a'.repeat(150)},1\n${'b'.repeat(151)},1\nx,-1\n,5\n`;
    const { rows } = await parseFile(await file('c.csv', csv));
    expect(rows.map((r) => r.valid)).to.deep.equal([true, false, false, false]);
    expect(rows[1].errors).to.deep.equal({ name: 'must be at most 150 characters' });
    expect(rows[2].errors).to.deep.equal({ cost_price: 'must be at least 0' });
    expect(rows[3].errors).to.deep.equal({ name: 'is required' });
  });

  it('marks a repeated sku as duplicate', async () => {
    const { duplicates } = await parseFile(await file('d.csv', 'name,sku\nA,X1\nB,x1\nC,\n'));
    expect([...duplicates]).to.deep.equal([2]);
  });

  it('reads an XLSX by content even when named .csv', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Harga');
    ws.addRow(['Nama Barang', 'Kode', 'Harga Beli', 'Harga Jual']);
    ws.addRow(['ONT Huawei', 'HW-1', 275000, 320000]);
    const p = join(dir, 'e.csv');
    await wb.xlsx.writeFile(p);
    const { rows } = await parseFile(p);
    expect(rows.map((r) => [r.name, r.sku, r.cost_price, r.sell_price])).to.deep.equal([
      ['ONT Huawei', 'HW-1', '275000', '320000'],
    ]);
  });

  it('refuses empty, binary, no-name-column and truncated XLSX files', async () => {
    expect(await refusal(await file('empty.csv', ''))).to.equal('the file is empty');
    expect(await refusal(await file('bin.csv', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2])))).to.match(
      /unsupported/,
    );
    expect(await refusal(await file('noname.csv', 'sku,cost\nA,1\n'))).to.match(/no name column/);
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('x').addRow(['name']);
    const full = Buffer.from(await wb.xlsx.writeBuffer());
    expect(await refusal(await file('trunc.xlsx', full.subarray(0, Math.floor(full.length / 2))))).to.match(
      /truncated XLSX/,
    );
  });

  it('refuses 50,001 rows and accepts 50,000', async () => {
    const lines = (n: number): string => 'name\n' + Array.from({ length: n }, (_, i) => `item ${i}`).join('\n');
    expect((await parseFile(await file('ok.csv', lines(50_000)))).rows).to.have.length(50_000);
    expect(await refusal(await file('big.csv', lines(50_001)))).to.equal('more than 50000 rows');
    // blank-celled records (",") are dropped, but a CSV stops being read after 100,001 records
    const blanks = (n: number) => '\n,'.repeat(n);
    const some = await parseFile(await file('blanks.csv', `name,sku\nitem 1,A${blanks(60_000)}\nitem 2,B\n`));
    expect(some.rows.map((r) => r.name)).to.deep.equal(['item 1', 'item 2']);
    expect(await refusal(await file('flood.csv', `name,sku${blanks(MAX_CSV_RECORDS)}\n`))).to.equal(
      'more than 50000 rows',
    );
  });

  it('detects delimiters and reads prices', () => {
    expect(detectDelimiter('a;b;"c,d,e"\n1,2,3,4')).to.equal(';');
    expect(detectDelimiter('a\tb\tc')).to.equal('\t');
    expect(detectDelimiter('name')).to.equal(',');
    expect([parsePrice('Rp 1.250.000'), parsePrice('1,250.50'), parsePrice('12,5'), parsePrice('abc')]).to.deep.equal([
      '1250000',
      '1250.50',
      '12.5',
      undefined,
    ]);
  });
});
