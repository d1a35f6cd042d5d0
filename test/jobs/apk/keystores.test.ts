import { expect } from 'chai';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import {
  createApkSigningSource,
  DEBUG_KEY_ALIAS,
  validityDays,
  writePrivateFile,
} from '../../../jobs/apk/keystores.js';
import { MissingKeystoreError } from '../../../jobs/apk/signing.js';
import { sealKeystore } from '../../../db/apk-keystore-secrets.js';
import { escapeDnValue, generateKeystore, inspectKeystore, keystoreTypeOf } from '../../../jobs/adapters/keytool.js';
import { ManualClock } from '../../../lib/clock.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';

/** keytool's own SHA256 line for an entry (the reference the store's fingerprint must equal). */
async function keytoolSha256(file: string, type: string, password: string, alias: string): Promise<string> {
  const r = await execa(
    'keytool',
    ['-list', '-v', '-alias', alias, '-keystore', file, '-storetype', type, '-storepass:env', 'KT_PW'],
    { env: { KT_PW: password } },
  );
  return /SHA256: ([0-9A-F:]+)/.exec(r.stdout)![1];
}

describe('apk keystores: keytool adapter and the signing source (issue 12 item 8)', function () {
  this.timeout(60_000);
  const appKey = randomBytes(32);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'apk-keys-test-'));
    registerCleanup(() => rm(dir, { recursive: true, force: true }));
  });

  it('keystoreTypeOf decides by magic bytes; escapeDnValue escapes the RFC 2253 specials', () => {
    expect(keystoreTypeOf(Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]))).to.equal('JKS');
    expect(keystoreTypeOf(Buffer.from([0x30, 0x82, 0x0a, 0x1c]))).to.equal('PKCS12');
    expect(keystoreTypeOf(Buffer.from([0xce, 0xce, 0xce, 0xce]))).to.equal(null);
    expect(keystoreTypeOf(Buffer.from('hello'))).to.equal(null);
    expect(escapeDnValue('A, B + "C" = \\D <E>; #F')).to.equal('A\\, B \\+ \\"C\\" \\= \\\\D \\<E\\>\\; \\#F');
  });

  it('generates a PKCS12 key whose subject, dates and fingerprint are what keytool reports', async () => {
    const clock = new ManualClock(Date.now());
    const file = path.join(dir, 'gen.p12');
    const info = await generateKeystore({
      file,
      alias: 'release',
      password: 'pw-' + randomBytes(6).toString('hex'),
      dname: { commonName: 'A, B + "C" = \\D <E>; #F', organization: 'PT Öko Net', country: 'ID' },
      start: clock.now(),
      validityDays: validityDays(clock.now(), 25),
    });
    const pem = (
      await execa('keytool', ['-exportcert', '-rfc', '-alias', 'release', '-keystore', file, '-storepass:env', 'P'], {
        env: { P: '' },
        reject: false,
      })
    ).exitCode;
    expect(pem).to.equal(1); // wrong (empty) password: the file is protected
    const start = new Date(Math.floor(clock.now().getTime() / 1000) * 1000);
    const end = new Date(start);
    end.setUTCFullYear(end.getUTCFullYear() + 25);
    expect(info.storeType).to.equal('PKCS12');
    expect(info.validUntil.toISOString()).to.equal(end.toISOString());
    expect(info.sha256Fingerprint).to.match(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  it('inspectKeystore: wrong store password, unknown alias, wrong key password and garbage are refused by field', async () => {
    const jks = path.join(dir, 'up.jks');
    await execa(
      'keytool',
      [
        '-genkeypair',
        '-alias',
        'upload',
        '-keyalg',
        'RSA',
        '-keysize',
        '2048',
        '-validity',
        '400',
        '-dname',
        'CN=Upload',
        '-keystore',
        jks,
        '-storetype',
        'JKS',
        '-storepass:env',
        'SP',
        '-keypass:env',
        'KP',
      ],
      { env: { SP: 'store-secret-1', KP: 'key-secret-2' } },
    );
    const ok = await inspectKeystore(jks, 'JKS', {
      storePassword: 'store-secret-1',
      keyAlias: 'upload',
      keyPassword: 'key-secret-2',
    });
    expect(ok.storeType).to.equal('JKS');
    expect(ok.sha256Fingerprint).to.equal(await keytoolSha256(jks, 'JKS', 'store-secret-1', 'upload'));
    const field = async (s: { storePassword: string; keyAlias: string; keyPassword: string }, file = jks) =>
      inspectKeystore(file, 'JKS', s).then(
        () => 'accepted',
        (e: { field?: string }) => e.field,
      );
    expect(await field({ storePassword: 'nope-nope', keyAlias: 'upload', keyPassword: 'key-secret-2' })).to.equal(
      'store_password',
    );
    expect(await field({ storePassword: 'store-secret-1', keyAlias: 'other', keyPassword: 'key-secret-2' })).to.equal(
      'key_alias',
    );
    expect(await field({ storePassword: 'store-secret-1', keyAlias: 'upload', keyPassword: 'wrong-key' })).to.equal(
      'key_password',
    );
    const junk = path.join(dir, 'junk.jks');
    await writePrivateFile(junk, Buffer.concat([Buffer.from([0xfe, 0xed, 0xfe, 0xed]), randomBytes(200)]));
    expect(
      await field({ storePassword: 'store-secret-1', keyAlias: 'upload', keyPassword: 'key-secret-2' }, junk),
    ).to.be.oneOf(['file', 'store_password']);
  });

  it('writeKeystore debug: generates the tenant debug key once, reuses it, writes a 0600 file keytool opens', async () => {
    const t = await makeTenant();
    const source = createApkSigningSource(env.knex, appKey);
    const a = path.join(dir, 'build-a');
    const b = path.join(dir, 'build-b');
    await execa('mkdir', ['-p', a, b]);
    const [m1, m2] = await Promise.all([
      source.writeKeystore(t.tenant.id, 'portal', 'debug', a),
      source.writeKeystore(t.tenant.id, 'netadmin', 'debug', b),
    ]);
    expect(m1.keyAlias).to.equal(DEBUG_KEY_ALIAS);
    expect(m1.storeType).to.equal('PKCS12');
    expect(path.dirname(m1.storeFile)).to.equal(path.resolve(a));
    expect((await stat(m1.storeFile)).mode & 0o777).to.equal(0o600);
    expect((await stat(m2.storeFile)).mode & 0o777).to.equal(0o600);
    const rows = await env.knex('apk_keystores').where({ tenant_id: t.tenant.id });
    expect(rows.map((r) => r.kind)).to.deep.equal(['debug']);
    // both builds got the one stored key, even though they started together
    expect(m2.storePassword).to.equal(m1.storePassword);
    expect((await readFile(m2.storeFile)).equals(await readFile(m1.storeFile))).to.equal(true);
    expect(await keytoolSha256(m1.storeFile, 'PKCS12', m1.storePassword, DEBUG_KEY_ALIAS)).to.equal(
      rows[0].sha256_fingerprint,
    );
    const subject = (
      await execa(
        'keytool',
        ['-exportcert', '-rfc', '-alias', DEBUG_KEY_ALIAS, '-keystore', m1.storeFile, '-storepass:env', 'P'],
        { env: { P: m1.storePassword } },
      )
    ).stdout;
    expect(new X509Certificate(subject).subject.split('\n')).to.deep.equal(['C=US', 'O=Android', 'CN=Android Debug']);
    // a later build reuses it
    const c = path.join(dir, 'build-c');
    await execa('mkdir', ['-p', c]);
    const m3 = await source.writeKeystore(t.tenant.id, 'portal', 'debug', c);
    expect(m3.storePassword).to.equal(m1.storePassword);
    expect(await env.knex('apk_keystores').where({ tenant_id: t.tenant.id }).count({ n: '*' })).to.deep.equal([
      { n: 1 },
    ]);
    // sealed at rest: neither the password nor the file bytes are in the row
    const raw = JSON.stringify(rows[0]);
    expect(raw).not.to.include(m1.storePassword);
    expect(raw).not.to.include((await readFile(m1.storeFile)).toString('base64').slice(0, 40));
    const audit = await env.knex('audit_log').where({ tenant_id: t.tenant.id }).pluck('action');
    expect(audit).to.deep.equal(['app_builder.debug_key_generated']);
  });

  it('writeKeystore release: MissingKeystoreError without one; the stored keystore and passwords with one', async () => {
    const t = await makeTenant();
    const source = createApkSigningSource(env.knex, appKey);
    expect(await source.hasReleaseKeystore(t.tenant.id, 'partner')).to.equal(false);
    const out = path.join(dir, 'rel');
    await execa('mkdir', ['-p', out]);
    const missing = await source.writeKeystore(t.tenant.id, 'partner', 'release', out).catch((e) => e);
    expect(missing).to.be.instanceOf(MissingKeystoreError);
    const file = path.join(dir, 'rel.p12');
    const info = await generateKeystore({
      file,
      alias: 'partner-key',
      password: 'partner-pass-1',
      dname: { commonName: 'P', organization: 'O', country: 'ID' },
      start: new Date(),
      validityDays: 3650,
    });
    const bytes = await readFile(file);
    await env.knex('apk_keystores').insert({
      tenant_id: t.tenant.id,
      kind: 'release',
      app_type: 'partner',
      store_type: 'PKCS12',
      key_alias: 'partner-key',
      sha256_fingerprint: info.sha256Fingerprint,
      valid_until: info.validUntil,
      source: 'generated',
      secret_enc: sealKeystore(appKey, t.tenant.id, 'partner', {
        keystore: bytes,
        storePassword: 'partner-pass-1',
        keyPassword: 'partner-pass-1',
      }),
    });
    expect(await source.hasReleaseKeystore(t.tenant.id, 'partner')).to.equal(true);
    expect(await source.hasReleaseKeystore(t.tenant.id, 'portal')).to.equal(false);
    const other = await makeTenant();
    expect(await source.hasReleaseKeystore(other.tenant.id, 'partner')).to.equal(false);
    const m = await source.writeKeystore(t.tenant.id, 'partner', 'release', out);
    expect(m).to.deep.include({
      storeType: 'PKCS12',
      keyAlias: 'partner-key',
      storePassword: 'partner-pass-1',
      keyPassword: 'partner-pass-1',
    });
    expect((await readFile(m.storeFile)).equals(bytes)).to.equal(true);
    expect((await stat(m.storeFile)).mode & 0o777).to.equal(0o600);
    // a sealed value copied to another app type's slot does not open
    await env.knex('apk_keystores').where({ tenant_id: t.tenant.id }).update({ app_type: 'portal' });
    const moved = await source.writeKeystore(t.tenant.id, 'portal', 'release', out).catch((e) => e);
    expect(moved).to.be.instanceOf(Error);
    expect(String(moved.message)).not.to.include('partner-pass-1');
  });
});
