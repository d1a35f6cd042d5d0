import { expect } from 'chai';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import { CSV_CONTENT_TYPE, csvStream, type CsvCell, type CsvColumn } from '../../lib/csv.js';
import { money, toNumber } from '../../lib/money.js';

async function text(s: Readable): Promise<string> {
  let out = '';
  for await (const c of s) out += c.toString();
  return out;
}

interface Row {
  code: string;
  name: string;
  amount: number | string | null;
  note?: CsvCell;
}
const columns: CsvColumn<Row>[] = [
  { header: 'Code', value: 'code' },
  { header: 'Name, full', value: 'name' },
  { header: 'Amount', value: 'amount' },
  { header: 'Note', value: (r) => r.note },
];

describe('lib/csv.ts: streamed CSV exports', () => {
  it('writes a header row, CRLF line ends and RFC 4180 quoting of commas, quotes and line breaks', async () => {
    const out = await text(
      csvStream(columns, [
        { code: 'C1', name: 'Budi, Santoso', amount: 1500 },
        { code: 'C2', name: 'The "Best" Net', amount: 12.5, note: 'line one\nline two' },
        { code: 'C3', name: 'plain', amount: null, note: 'cr\ronly' },
      ]),
    );
    expect(out).to.equal(
      [
        'Code,"Name, full",Amount,Note',
        'C1,"Budi, Santoso",1500,',
        'C2,"The ""Best"" Net",12.5,"line one\nline two"',
        'C3,plain,,"cr\ronly"',
        '',
      ].join('\r\n'),
    );
    expect(CSV_CONTENT_TYPE).to.equal('text/csv; charset=utf-8');
  });

  it('guards against formula injection: = + - @ tab and CR get a leading quote, numbers stay numbers', async () => {
    const rows: Row[] = [
      { code: '=HYPERLINK("http://evil.test","x")', name: '+62812', amount: -25.5, note: '@SUM(A1)' },
      { code: '-2+3', name: '\tcmd', amount: '-7', note: '\r=1' },
      { code: 'a=b', name: 'x-y', amount: toNumber(money('-0.10')), note: '＝1' },
    ];
    const lines = (await text(csvStream(columns, rows))).split('\r\n');
    expect(lines[1]).to.equal(`"'=HYPERLINK(""http://evil.test"",""x"")",'+62812,-25.5,'@SUM(A1)`);
    expect(lines[2]).to.equal(`'-2+3,'\tcmd,'-7,"'\r=1"`);
    expect(lines[3]).to.equal(`a=b,x-y,-0.1,'＝1`);
  });

  it('writes booleans, dates, bigints, decimals and objects in a fixed form; adds a BOM on request', async () => {
    const at = new Date(Date.UTC(2000, 0, 2, 3, 4, 5));
    const cols: CsvColumn<{ v: CsvCell }>[] = [{ header: 'v', value: 'v' }];
    const rows = [true, false, at, 12345678901234567890n, money('19.90'), { a: 1 }, undefined].map((v) => ({ v }));
    const out = await text(csvStream(cols, rows, { bom: true }));
    expect(out).to.equal(
      '\uFEFFv\r\ntrue\r\nfalse\r\n2000-01-02T03:04:05.000Z\r\n12345678901234567890\r\n19.9\r\n"{""a"":1}"\r\n\r\n',
    );
  });

  it('streams a 100k-row export from an async iterable without buffering it, with backpressure', async () => {
    const total = 100_000;
    let produced = 0;
    let exhausted = false;
    async function* rows(): AsyncGenerator<Row> {
      for (let i = 1; i <= total; i++) {
        produced = i;
        yield { code: `C${i}`, name: `Customer ${i}`, amount: i / 100 };
      }
      exhausted = true;
    }
    const s = csvStream(columns, rows());
    const [first] = (await once(s, 'data')) as [Buffer];
    s.pause();
    expect(exhausted, 'the iterable is not exhausted when the first chunk arrives').to.equal(false);
    expect(first.toString()).to.match(/^Code,"Name, full",Amount,Note\r\n/);
    // while nobody reads, production stops at about the stream buffers' size
    await sleep(100);
    expect(exhausted).to.equal(false);
    expect(produced).to.be.lessThan(total / 2);
    let bytes = first.length;
    let lines = first.toString().split('\r\n').length - 1;
    let tail = '';
    let sawFirstRow = false;
    for await (const c of s) {
      if (!sawFirstRow && c.toString().includes('C1,Customer 1,0.01,\r\n')) {
        sawFirstRow = true;
        expect(exhausted, 'rows are written while later ones are not produced yet').to.equal(false);
      }
      bytes += c.length;
      const str = c.toString();
      lines += str.split('\r\n').length - 1;
      tail = str;
    }
    expect(exhausted).to.equal(true);
    expect(sawFirstRow || first.toString().includes('C1,Customer 1,0.01,\r\n')).to.equal(true);
    expect(lines).to.equal(total + 1);
    expect(tail.endsWith('C100000,Customer 100000,1000,\r\n')).to.equal(true);
    expect(bytes).to.be.greaterThan(total * 20);
  });

  it('stops pulling rows when the consumer goes away, and fails the stream when the rows fail', async () => {
    let closed = false;
    let produced = 0;
    async function* endless(): AsyncGenerator<Row> {
      try {
        for (let i = 1; ; i++) {
          produced = i;
          yield { code: `C${i}`, name: 'x', amount: i };
        }
      } finally {
        closed = true;
      }
    }
    const s = csvStream(columns, endless());
    await once(s, 'data');
    s.destroy();
    await once(s, 'close');
    for (let i = 0; i < 100 && !closed; i++) await sleep(10);
    expect(closed, 'the generator was returned').to.equal(true);
    const stopped = produced;
    await sleep(20);
    expect(produced).to.equal(stopped);

    async function* failing(): AsyncGenerator<Row> {
      yield { code: 'C1', name: 'x', amount: 1 };
      throw new Error('cursor broke');
    }
    let err: Error | undefined;
    try {
      await text(csvStream(columns, failing()));
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).to.equal('cursor broke');
  });

  it('serves as a Koa response body with the CSV content type', async () => {
    const app = new Koa();
    app.use((ctx) => {
      ctx.type = CSV_CONTENT_TYPE;
      ctx.attachment('customers.csv');
      ctx.body = csvStream(
        columns,
        (async function* () {
          for (let i = 1; i <= 3; i++) yield { code: `C${i}`, name: `=cmd|' /C calc'!A${i}`, amount: i * 1.5 };
        })(),
      );
    });
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).to.equal('attachment; filename="customers.csv"');
      expect(await res.text()).to.equal(
        'Code,"Name, full",Amount,Note\r\n' +
          "C1,'=cmd|' /C calc'!A1,1.5,\r\nC2,'=cmd|' /C calc'!A2,3,\r\nC3,'=cmd|' /C calc'!A3,4.5,\r\n",
      );
    } finally {
      server.close();
    }
  });
});
