import { Model } from 'objection';

/** `release`: an app type's keystore; `debug`: the tenant's debug key (issue 12 item 8). */
export type ApkKeystoreKind = 'release' | 'debug';

/**
 * Row of `apk_keystores` (issue 12 item 8): a keystore the Android app builder signs with.
 * Tenant-scoped: query it through TenantScope.query(), never bare. `secret_enc` (the sealed file
 * and passwords, db/apk-keystore-secrets.ts) never leaves the server.
 */
export class ApkKeystore extends Model {
  static tableName = 'apk_keystores';
  id!: number;
  tenant_id!: number;
  kind!: ApkKeystoreKind;
  /** one of APK_APP_TYPES for `release`, null for `debug` */
  app_type!: string | null;
  store_type!: 'JKS' | 'PKCS12';
  key_alias!: string;
  /** SHA-256 of the signing certificate, keytool's form: 32 upper-case hex pairs joined by `:` */
  sha256_fingerprint!: string;
  /** the certificate's notAfter */
  valid_until!: Date;
  source!: 'uploaded' | 'generated';
  /** sealed {keystore, store_password, key_password} */
  secret_enc!: string;
  created_by!: number | null;
  created_at!: Date;
  updated_at!: Date;
}
