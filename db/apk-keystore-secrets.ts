import { open, seal } from '../lib/crypto.js';

/**
 * The Android app builder's keystores at rest (issue 12 item 8): the keystore file and its two
 * passwords, sealed together in `apk_keystores.secret_enc` with APP_KEY (AES-256-GCM, lib/crypto.ts;
 * DESIGN.md §3). The associated data binds a sealed value to its tenant and slot (`debug` or the app
 * type), so a value copied into another tenant's row or another app type does not open.
 */

/** What a sealed keystore holds. */
export interface KeystoreSecret {
  /** the keystore file's bytes (JKS or PKCS12) */
  keystore: Buffer;
  storePassword: string;
  keyPassword: string;
}

/** `debug` or a release app type (`portal`, ...). */
export type KeystoreSlot = string;

const aad = (tenantId: number, slot: KeystoreSlot) => `apk_keystores.secret:${tenantId}:${slot}`;

/**
 * Seals a keystore and its passwords for `apk_keystores.secret_enc`.
 * @param appKey the 32-byte APP_KEY
 * @param slot `debug` or the app type
 * @returns the sealed text (`v1.<iv>.<tag>.<ciphertext>`)
 */
export function sealKeystore(appKey: Buffer, tenantId: number, slot: KeystoreSlot, s: KeystoreSecret): string {
  const plain = JSON.stringify({ k: s.keystore.toString('base64'), sp: s.storePassword, kp: s.keyPassword });
  return seal(appKey, plain, aad(tenantId, slot));
}

/**
 * Opens what sealKeystore produced.
 * @throws Error when the key, tenant or slot differ or the value was tampered with
 */
export function openKeystore(appKey: Buffer, tenantId: number, slot: KeystoreSlot, sealed: string): KeystoreSecret {
  const o = JSON.parse(open(appKey, sealed, aad(tenantId, slot))) as { k: string; sp: string; kp: string };
  return { keystore: Buffer.from(o.k, 'base64'), storePassword: o.sp, keyPassword: o.kp };
}
