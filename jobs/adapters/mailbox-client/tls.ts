import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';

/**
 * TLS settings shared by the IMAP (imapflow) and SMTP (nodemailer) connections of the mailbox
 * client. Certificate verification is always on: there is deliberately no switch to turn it off.
 * A private CA of the mail servers can be trusted in addition to Node's built-in roots.
 */

/** TLS option of {@link createMailboxClient} (`createMailboxClient({ tls: { ca } })`). */
export interface MailTlsOptions {
  /**
   * Extra CA certificate(s), PEM text (one or several certificates per entry), trusted in addition
   * to Node's built-in Mozilla roots, e.g. the CA that signed the mail servers' certificates.
   */
  ca?: string | Buffer | (string | Buffer)[];
}

/** Builds the per-host connection options (see {@link mailTls}). */
export type MailTlsFor = (host: string) => tls.ConnectionOptions;

/**
 * Prepares the TLS connection options of the mailbox client once (one secure context holding
 * the built-in roots plus the extra CAs, reused by every connection).
 * @param o the client's TLS option; absent or without `ca` = Node's built-in roots only
 * @returns a function giving, for a server host name or IP, the options for `tls.connect`:
 *   `rejectUnauthorized: true`, `minVersion: 'TLSv1.2'`, `servername` = the host when it is a name
 *   (SNI and the name the certificate is checked against; an IP is checked against the IP SANs),
 *   and the secure context with the extra CAs
 * @throws Error when `ca` holds no PEM certificate or one that cannot be parsed
 */
export function mailTls(o: MailTlsOptions = {}): MailTlsFor {
  const entries = (Array.isArray(o.ca) ? o.ca : o.ca === undefined ? [] : [o.ca]).map((c) => c.toString());
  let secureContext: tls.SecureContext | undefined;
  if (entries.length) {
    // one PEM block per certificate; Node's secure context skips blocks it cannot parse without a word
    const blocks = entries.map((pem) => pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []);
    if (blocks.some((b) => !b.length)) {
      throw new Error('mailbox client: tls.ca must be PEM text with at least one "BEGIN CERTIFICATE" block');
    }
    const extra = blocks.flat();
    try {
      for (const pem of extra) new X509Certificate(pem);
      secureContext = tls.createSecureContext({ ca: [...tls.rootCertificates, ...extra], minVersion: 'TLSv1.2' });
    } catch {
      throw new Error('mailbox client: tls.ca could not be read as PEM certificates');
    }
  }
  return (host) => ({
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
    ...(net.isIP(host) ? {} : { servername: host }),
    ...(secureContext ? { secureContext } : {}),
  });
}
