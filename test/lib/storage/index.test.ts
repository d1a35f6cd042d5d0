import { expect } from 'chai';
import { parse } from 'content-disposition';
import {
  contentDisposition,
  createStorage,
  defaultLocalRoot,
  detectType,
  LocalStorage,
  typeAllowed,
  validateKey,
  StorageKeyError,
  type StorageConfig,
} from '../../../lib/storage/index.js';
import { bytes, PNG_1X1 } from './fixtures.js';

describe('lib/storage/index.ts: factory, type detection, keys, Content-Disposition', () => {
  it('builds the configured driver and refuses an unknown one', () => {
    const local = createStorage({ driver: 'local', root: defaultLocalRoot('/var/lib/isp') });
    expect(local).to.be.instanceOf(LocalStorage);
    expect((local as LocalStorage).root).to.equal('/var/lib/isp/storage');
    // a driver the StorageConfig type does not allow, as a bad config file would give: the refusal is under test
    const ftp = { driver: 'ftp' } as unknown as StorageConfig;
    expect(() => createStorage(ftp)).to.throw(TypeError, /unknown storage driver/);
    expect(() => createStorage({ driver: 'local', root: '' })).to.throw(TypeError);
  });

  it('decides the type from the bytes: signatures, UTF-8 text, else octet-stream', async () => {
    const text = { mime: 'text/plain', ext: 'txt' };
    const binary = { mime: 'application/octet-stream', ext: 'bin' };
    expect(await detectType(PNG_1X1)).to.deep.equal({ mime: 'image/png', ext: 'png' });
    const pdf = Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj\n');
    expect(await detectType(pdf)).to.deep.equal({ mime: 'application/pdf', ext: 'pdf' });
    expect(await detectType(Buffer.from('name,kota\r\nBudi,Jakarta\r\n'))).to.deep.equal(text);
    // a multi-byte character cut at the end of the sample is still text
    const cut = Buffer.from('Rp 1.500 — ✓ terima kasih'.repeat(200)).subarray(0, 4099);
    expect((await detectType(cut)).mime).to.equal('text/plain');
    expect(await detectType(bytes(4100))).to.deep.equal(binary);
    expect(await detectType(Buffer.from('text with a \x00 NUL'))).to.deep.equal(binary);
    expect(await detectType(Buffer.alloc(0))).to.deep.equal(binary);
  });

  it('matches allowed types exactly or by family', () => {
    expect(typeAllowed('image/png', ['image/*'])).to.equal(true);
    expect(typeAllowed('image/png', ['image/jpeg', 'image/png'])).to.equal(true);
    expect(typeAllowed('text/plain', ['image/*', 'application/pdf'])).to.equal(false);
    expect(typeAllowed('imagex/png', ['image/*'])).to.equal(false);
    expect(typeAllowed('image/png', [])).to.equal(false);
  });

  it('accepts ordinary keys and names the reason for a refused one', () => {
    for (const k of ['a.txt', 'tenants/12/tickets/9f3c-1.png', 'ünïcode/ファイル.pdf', 'a..b/c']) {
      expect(validateKey(k)).to.equal(k);
    }
    const reason = (k: string) => {
      try {
        validateKey(k);
      } catch (e) {
        return (e as StorageKeyError).errors.key[0];
      }
    };
    expect(reason('../x')).to.equal('key has a ".." segment');
    expect(reason('/x')).to.equal('key is an absolute path');
    expect(reason('a\0b')).to.equal('key contains NUL or control characters');
    expect(reason('a\\..\\b')).to.equal('key contains a backslash');
  });

  it('writes Content-Disposition per RFC 6266 with a UTF-8 filename* for non-ASCII names', () => {
    expect(contentDisposition('report.pdf')).to.equal('attachment; filename=report.pdf');
    expect(contentDisposition('photo 1.png', 'inline')).to.equal('inline; filename="photo 1.png"');
    const h = contentDisposition('Faktur Mei "2026" résumé.pdf');
    expect(h).to.equal(
      'attachment; filename="Faktur Mei \\"2026\\" r?sum?.pdf"; ' +
        "filename*=UTF-8''Faktur%20Mei%20%222026%22%20r%C3%A9sum%C3%A9.pdf",
    );
    expect(parse(h).parameters.filename).to.equal('Faktur Mei "2026" résumé.pdf');
    const evil = contentDisposition('x\r\nSet-Cookie: a=b.txt');
    expect(evil).to.not.match(/[\r\n]/);
    expect(parse(evil).parameters.filename).to.equal('x\r\nSet-Cookie: a=b.txt');
    expect(contentDisposition('../../etc/passwd')).to.equal('attachment; filename=passwd');
    expect(contentDisposition('C:\\Users\\x\\file.txt')).to.equal('attachment; filename=file.txt');
  });
});
