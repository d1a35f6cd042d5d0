import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { Knex } from 'knex';
import { searchPath } from '../../lib/config.js';
import { createApkSigningSource } from './keystores.js';
import { MissingKeystoreError, type ApkSigningSource, type SigningMaterial } from './signing.js';
import { KEYTOOL_JVM_FLAGS } from '../adapters/keytool.js';

/**
 * The keystore source the web and worker processes use (issue 12): the keystore store of item 8
 * (`createApkSigningSource` in jobs/apk/keystores.ts: release keystores per app type, the tenant's
 * debug key made once, both sealed under APP_KEY). Without an APP_KEY nothing can be sealed: then
 * there are no release keystores (release builds answer 422 `keystore`) and each debug build gets a
 * key that keytool makes for it ({@link generateKeystore}).
 */
export function defaultApkSigningSource(knex: Knex, appKey: Buffer | undefined): ApkSigningSource {
  if (appKey) return createApkSigningSource(knex, appKey);
  return {
    hasReleaseKeystore: async () => false,
    async writeKeystore(_tenantId, appType, buildType, dir) {
      if (buildType === 'release') throw new MissingKeystoreError(appType);
      return generateKeystore(dir, { alias: 'androiddebugkey', commonName: 'Android Debug' });
    },
  };
}

/**
 * Makes a PKCS12 keystore with one RSA 2048 key by `keytool -genkeypair`, random passwords passed
 * through keytool's environment (`-storepass:env`), never its command line. The file is mode 0600.
 * @param dir where `keystore.p12` is written
 * @param opts alias and CN of the key; validity in days (default 10000)
 * @returns how to open it
 * @throws Error with keytool's output when it fails (or is missing)
 */
export async function generateKeystore(
  dir: string,
  opts: { alias: string; commonName: string; validityDays?: number; keytool?: string },
): Promise<SigningMaterial> {
  const storeFile = path.join(dir, 'keystore.p12');
  const password = randomBytes(18).toString('base64url');
  const r = await execa(
    opts.keytool ?? 'keytool',
    [
      ...KEYTOOL_JVM_FLAGS,
      '-genkeypair',
      '-keystore',
      storeFile,
      '-storetype',
      'PKCS12',
      '-storepass:env',
      'APK_KS_PASS',
      '-keypass:env',
      'APK_KS_PASS',
      '-alias',
      opts.alias,
      '-keyalg',
      'RSA',
      '-keysize',
      '2048',
      '-validity',
      String(opts.validityDays ?? 10000),
      '-dname',
      `CN=${opts.commonName.replace(/[,=+<>#;"\\]/g, ' ')}`,
      '-noprompt',
    ],
    { env: { PATH: searchPath(), APK_KS_PASS: password }, extendEnv: false, reject: false, all: true, timeout: 60_000 },
  );
  if (r.exitCode !== 0) throw new Error(`keytool failed: ${(r.all ?? '').slice(0, 500)}`);
  await fs.chmod(storeFile, 0o600);
  return { storeFile, storeType: 'PKCS12', storePassword: password, keyAlias: opts.alias, keyPassword: password };
}
