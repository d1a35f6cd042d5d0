import { createHash } from 'node:crypto';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { createStorage, type Storage } from '../../../lib/storage/index.js';
import { ATTACHMENT_MAX_BYTES, attachmentName } from '../../../api/tickets/work-record.js';
import { PNG_1X1 } from '../../lib/storage/fixtures.js';

/** A small but real PDF (one empty page). */
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
    '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);
/** The start of a JPEG (JFIF): enough for the type to be decided by content. */
const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]),
  Buffer.alloc(200, 7),
  Buffer.from([0xff, 0xd9]),
]);
/** A PNG padded with zeros to `size` bytes (still a PNG by its first bytes). */
const pngOf = (size: number) => Buffer.concat([PNG_1X1, Buffer.alloc(size - PNG_1X1.length)]);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** One part of a multipart body. */
interface Part {
  name: string;
  data: Buffer | string;
  filename?: string;
  type?: string;
}

/** Issue 8 item 6: ticket attachments through the storage driver (DESIGN.md §10 "files"). */
describe('/api/tickets/{id}/attachments: streamed uploads typed by content, 10 MB, downloads', function () {
  this.timeout(60_000);
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let ticketId: number;
  let otherTicketId: number;
  let bTicketId: number;
  const root = () => path.join(env.dir, 'storage');

  const send = async (id: number, parts: Part[], token = a.adminToken, target = app) => {
    const form = new FormData();
    for (const p of parts) {
      if (p.filename === undefined) form.append(p.name, String(p.data));
      else
        form.append(
          p.name,
          new Blob([typeof p.data === 'string' ? p.data : new Uint8Array(p.data)], {
            type: p.type ?? 'application/octet-stream',
          }),
          p.filename,
        );
    }
    const res = await fetch(`${target.url}/api/tickets/${id}/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const file = (data: Buffer | string, filename: string, type?: string): Part => ({
    name: 'file',
    data,
    filename,
    type,
  });
  const rows = async (tenantId = a.tenant.id) =>
    Number((await tenantKnex(tenantId)('ticket_attachments').where({ tenant_id: tenantId }).count('* as n'))[0].n);
  /** Files stored for tenant a (and leftovers of uploads in progress), relative to the storage root. */
  const stored = async () => {
    const entries = await fs.readdir(root(), { recursive: true, withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(root(), path.join(e.parentPath, e.name)))
      .filter((p) => p.startsWith(`tenants/${a.tenant.id}/`) || p.startsWith('.partial'))
      .sort();
  };

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    ticketId = (await seedBasics(a)).ticketId;
    otherTicketId = (await seedBasics(a)).ticketId;
    bTicketId = (await seedBasics(b)).ticketId;
  });

  it('stores a real PNG: 201 with its metadata, audited; the download streams the same bytes', async () => {
    const tech = await makeUser(a.tenant.id, 'technician');
    const res = await send(ticketId, [file(PNG_1X1, 'router led.png', 'image/png')], tech.token);
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.deep.include({
      file_name: 'router led.png',
      mime_type: 'image/png',
      size_bytes: PNG_1X1.length,
      sha256: sha256(PNG_1X1),
      download_url: `/api/tickets/${ticketId}/attachments/${d.id}`,
    });
    expect(d.user).to.deep.equal({ id: tech.id, name: d.user.name });
    const row = await tenantKnex(a.tenant.id)('ticket_attachments').where({ id: d.id }).first();
    expect(row).to.include({ tenant_id: a.tenant.id, ticket_id: ticketId, user_id: tech.id, mime_type: 'image/png' });
    expect(row.storage_key).to.match(new RegExp(`^tenants/${a.tenant.id}/tickets/${ticketId}/[0-9a-f-]{36}$`));
    const audit = await tenantKnex(a.tenant.id)('audit_log').where({
      tenant_id: a.tenant.id,
      action: 'tickets.attachment_added',
    });
    expect(audit.map((r) => r.after.attachment_id)).to.include(d.id);
    expect(audit.find((r) => r.after.attachment_id === d.id)).to.deep.include({
      user_id: tech.id,
      subject_type: 'tickets',
    });

    const dl = await fetch(`${app.url}${d.download_url}`, { headers: { authorization: `Bearer ${tech.token}` } });
    expect(dl.status).to.equal(200);
    expect(dl.headers.get('content-type')).to.equal('image/png');
    expect(dl.headers.get('content-length')).to.equal(String(PNG_1X1.length));
    expect(dl.headers.get('content-disposition')).to.equal('attachment; filename="router led.png"');
    expect(dl.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(Buffer.from(await dl.arrayBuffer()).equals(PNG_1X1)).to.equal(true);

    const detail = await app.request('GET', `/api/tickets/${ticketId}`, { token: a.adminToken });
    expect(detail.body.data.attachments.map((x: { id: number }) => x.id)).to.include(d.id);
  });

  it('types by content, not by name or header: a PDF sent as octet-stream, a JPEG named .png', async () => {
    const pdf = await send(ticketId, [file(PDF, 'report', 'application/octet-stream')]);
    expect(pdf.status).to.equal(201);
    expect(pdf.body.data).to.include({ mime_type: 'application/pdf', file_name: 'report.pdf', size_bytes: PDF.length });
    const jpeg = await send(ticketId, [file(JPEG, 'photo.png', 'image/png')]);
    expect(jpeg.status).to.equal(201);
    expect(jpeg.body.data).to.include({ mime_type: 'image/jpeg', file_name: 'photo.png.jpg' });
    const dl = await fetch(`${app.url}${pdf.body.data.download_url}`, {
      headers: { authorization: `Bearer ${a.adminToken}` },
    });
    expect(dl.headers.get('content-type')).to.equal('application/pdf');
    expect(dl.headers.get('content-disposition')).to.equal('attachment; filename=report.pdf');
    expect(sha256(Buffer.from(await dl.arrayBuffer()))).to.equal(sha256(PDF));
  });

  it('refuses a text file named .png and declared image/png: 415 UNSUPPORTED_FILE_TYPE, no row, no file', async () => {
    const before = { rows: await rows(), files: await stored() };
    const res = await send(ticketId, [file('just some text, not an image\n', 'fake.png', 'image/png')]);
    expect(res.status).to.equal(415);
    expect(res.body.code).to.equal('UNSUPPORTED_FILE_TYPE');
    expect({ rows: await rows(), files: await stored() }).to.deep.equal(before);
  });

  it('10 MB + 1 byte: 413 PAYLOAD_TOO_LARGE, no row, no file, no leftover; exactly 10 MB is accepted', async () => {
    const before = { rows: await rows(), files: await stored() };
    const big = await send(ticketId, [file(pngOf(ATTACHMENT_MAX_BYTES + 1), 'big.png', 'image/png')]);
    expect(big.status).to.equal(413);
    expect(big.body.code).to.equal('PAYLOAD_TOO_LARGE');
    expect({ rows: await rows(), files: await stored() }).to.deep.equal(before);
    const max = pngOf(ATTACHMENT_MAX_BYTES);
    const ok = await send(ticketId, [file(max, 'max.png', 'image/png')]);
    expect(ok.status).to.equal(201);
    expect(ok.body.data).to.include({ size_bytes: ATTACHMENT_MAX_BYTES, sha256: sha256(max) });
    expect(await rows()).to.equal(before.rows + 1);
  });

  it('a declared Content-Length beyond 10 MB: 413 before the body is read, connection closed', async () => {
    const { port } = new URL(app.url);
    const answer = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/api/tickets/${ticketId}/attachments`,
        headers: {
          authorization: `Bearer ${a.adminToken}`,
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(50 * 1024 * 1024),
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      });
      req.on('error', reject);
      req.write('--x\r\n'); // the body never comes: the answer must not wait for it
    });
    expect(answer.status).to.equal(413);
    expect(answer.connection).to.equal('close');
    expect(JSON.parse(answer.body).code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('refuses what is not one file in the file field (422 naming the field) and keeps nothing', async () => {
    const before = { rows: await rows(), files: await stored() };
    const json = await app.request('POST', `/api/tickets/${ticketId}/attachments`, {
      token: a.adminToken,
      body: { file: 'x' },
    });
    expect(json.status).to.equal(422);
    expect(json.body.errors).to.have.property('file');
    const cases: [Part[], string][] = [
      [[{ name: 'note', data: 'hello' }], 'note'],
      [[file(PNG_1X1, 'a.png', 'image/png'), { name: 'description', data: 'after the file' }], 'description'],
      [[file(PNG_1X1, 'a.png', 'image/png'), file(PNG_1X1, 'b.png', 'image/png')], 'file'],
      [[{ ...file(PNG_1X1, 'a.png', 'image/png'), name: 'photo' }], 'photo'],
    ];
    for (const [parts, field] of cases) {
      const res = await send(ticketId, parts);
      expect(res.status, field).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors, field).to.have.property(field);
    }
    expect({ rows: await rows(), files: await stored() }).to.deep.equal(before);
  });

  it("another tenant's ticket or attachment is 404 and nothing is stored; the wrong ticket id is 404", async () => {
    const before = { rows: await rows(b.tenant.id), files: await stored() };
    const up = await send(bTicketId, [file(PNG_1X1, 'x.png', 'image/png')]);
    expect(up.status).to.equal(404);
    expect(up.body.code).to.equal('NOT_FOUND');
    expect({ rows: await rows(b.tenant.id), files: await stored() }).to.deep.equal(before);
    const mine = (await send(ticketId, [file(PNG_1X1, 'mine.png', 'image/png')])).body.data;
    const foreign = await app.request('GET', mine.download_url, { token: b.adminToken });
    expect(foreign.status).to.equal(404);
    const wrongTicket = await app.request('GET', `/api/tickets/${otherTicketId}/attachments/${mine.id}`, {
      token: a.adminToken,
    });
    expect(wrongTicket.status).to.equal(404);
  });

  it('an upload cut off by the client leaves no row and no partial file', async () => {
    const before = { rows: await rows(), files: await stored() };
    const logged = () => app.logs.filter((l) => l.includes(`/api/tickets/${ticketId}/attachments`)).length;
    const seen = logged();
    const { port } = new URL(app.url);
    const head = Buffer.from(
      '--cut\r\nContent-Disposition: form-data; name="file"; filename="cut.png"\r\n' +
        'Content-Type: image/png\r\n\r\n',
    );
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/api/tickets/${ticketId}/attachments`,
      headers: {
        authorization: `Bearer ${a.adminToken}`,
        'content-type': 'multipart/form-data; boundary=cut',
        'content-length': String(5 * 1024 * 1024),
      },
    });
    req.on('error', () => undefined);
    req.write(Buffer.concat([head, pngOf(1024 * 1024)]));
    await new Promise((r) => req.once('finish', r).end());
    req.destroy();
    // the server logs the request once it has given up on it; until then it may still be writing
    for (let i = 0; i < 200 && logged() === seen; i++) await new Promise((r) => setTimeout(r, 50));
    expect(logged()).to.equal(seen + 1);
    expect({ rows: await rows(), files: await stored() }).to.deep.equal(before);
  });

  it('a failed storage write leaves no row (and answers 500 without details)', async () => {
    const real = createStorage({ driver: 'local', root: root() });
    const broken: Storage = {
      ...real,
      get: real.get.bind(real),
      delete: real.delete.bind(real),
      exists: real.exists.bind(real),
      async put(key: string, source: Readable) {
        for await (const _ of source) throw new Error('disk on fire');
        return real.put(key, source, { maxBytes: 1 });
      },
    };
    const failing = await startTestApp({}, { storage: broken });
    const before = await rows();
    const res = await send(ticketId, [file(PNG_1X1, 'x.png', 'image/png')], a.adminToken, failing);
    expect(res.status).to.equal(500);
    expect(res.body.code).to.equal('SERVER_ERROR');
    expect(JSON.stringify(res.body)).not.to.include('disk on fire');
    expect(await rows()).to.equal(before);
  });

  it('download names: extension follows the detected type; control characters and paths dropped', () => {
    expect(attachmentName('scan.PDF', 'application/pdf')).to.equal('scan.PDF');
    expect(attachmentName('foto.jpeg', 'image/jpeg')).to.equal('foto.jpeg');
    expect(attachmentName('evil.html', 'image/png')).to.equal('evil.html.png');
    expect(attachmentName('../../etc/pass\nwd', 'image/webp')).to.equal('passwd.webp');
    expect(attachmentName('C:\\Users\\x\\bon.pdf', 'application/pdf')).to.equal('bon.pdf');
    expect(attachmentName(null, 'image/png')).to.equal('attachment.png');
    expect(attachmentName('..', 'image/png')).to.equal('attachment.png');
  });
});
