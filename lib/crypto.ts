import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encryption at rest with AES-256-GCM under APP_KEY (DESIGN.md §3). Used for stored credentials
 * (provider tokens, panel passwords) and for the short-lived sealed rows that carry a secret to a job.
 * Format: `v1.<iv base64url>.<tag base64url>.<ciphertext base64url>`.
 */

/**
 * Encrypts a UTF-8 string.
 * @param key 32-byte key
 * @param plain text to encrypt
 * @param aad optional associated data bound to the ciphertext (e.g. the table and row purpose)
 */
export function seal(key: Buffer, plain: string, aad = ''): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  if (aad) c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/**
 * Decrypts what seal() produced.
 * @throws Error when the format is wrong, the key differs or the data was tampered with
 */
export function open(key: Buffer, sealed: string, aad = ''): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('sealed value has an unknown format');
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  if (aad) d.setAAD(Buffer.from(aad));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}
