import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import nodemailer from 'nodemailer';
import type { AddressInfo } from 'node:net';

/** Options of {@link startSmtpRelay}. */
export interface SmtpRelayOptions {
  /** port on 127.0.0.1 (default: a free port chosen by the OS) */
  port?: number;
  /** checks a login (e.g. against Dovecot's passwd-file); user is the full e-mail address */
  authenticate(user: string, password: string): Promise<boolean> | boolean;
  /** true when the address is a local mailbox; default: every address */
  isLocal?(address: string): Promise<boolean> | boolean;
  /**
   * what happens to a recipient that is not local: refused with 550 (default), or accepted and dropped (a demo
   * without outside delivery)
   */
  nonLocal?: 'reject' | 'discard';
  /** where accepted messages go: Dovecot's LMTP listener */
  lmtp: { host: string; port: number };
  /**
   * Transport security of the listener (default 'none'):
   * - 'none': plaintext, STARTTLS not offered, AUTH allowed without TLS (the tests' and demo's default);
   * - 'starttls': STARTTLS offered (needs `tls`), AUTH refused (538) until the session is upgraded;
   * - 'ssl': implicit TLS from the first byte (needs `tls`), like port 465.
   */
  security?: 'none' | 'starttls' | 'ssl';
  /** server certificate (PEM, leaf first) and its unencrypted key (PEM); needed unless security is 'none' */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

/** One AUTH attempt the relay saw (no password): who, and whether the session was under TLS by then. */
export interface SmtpAuthAttempt {
  user: string;
  secure: boolean;
}

/** A refusal the relay answers at DATA (for tests of mail_server_error). */
export interface SmtpRefusal {
  code: number;
  message: string;
}

/** A running relay. */
export interface SmtpRelay {
  host: '127.0.0.1';
  port: number;
  /** messages accepted since start (each delivered to its local recipients) */
  readonly delivered: number;
  /** recipients accepted and dropped since start (nonLocal 'discard') */
  readonly discarded: number;
  /** the listener's transport security ({@link SmtpRelayOptions.security}) */
  readonly security: 'none' | 'starttls' | 'ssl';
  /** every AUTH attempt that reached the login check since start, oldest first */
  readonly authAttempts: readonly SmtpAuthAttempt[];
  /** Makes the relay refuse every message at DATA with this reply (null: accept again). */
  refuse(r: SmtpRefusal | null): void;
  /**
   * While on, the relay reads a message's whole body and then drops the connection without any
   * reply and without delivering it (tests of a delivery whose outcome the client cannot know).
   */
  dropAfterData(on: boolean): void;
  stop(): Promise<void>;
}

/**
 * Starts the SMTP submission server of the tests and the demo (TOOLCHAIN.md "Dovecot"): npm
 * smtp-server on loopback, AUTH PLAIN/LOGIN, every accepted message delivered over LMTP into
 * Dovecot. By default plaintext (no STARTTLS); `security` 'starttls' or 'ssl' with `tls` gives a
 * STARTTLS or an implicit-TLS listener. Refuses: unauthenticated MAIL FROM (530, smtp-server's own),
 * AUTH before STARTTLS on a 'starttls' listener (538), a wrong login (535), a sender other than
 * the authenticated mailbox (553), a non-local recipient (550, unless `nonLocal: 'discard'`), and
 * everything at DATA while {@link SmtpRelay.refuse} is set (e.g. 554).
 * @param opts see {@link SmtpRelayOptions}
 * @returns the running relay; resolves once it listens
 * @throws Error when `security` needs TLS but `tls` is missing, or the port cannot be bound
 */
export async function startSmtpRelay(opts: SmtpRelayOptions): Promise<SmtpRelay> {
  const security = opts.security ?? 'none';
  if (security !== 'none' && !opts.tls) {
    throw new Error(`smtp relay: security '${security}' needs tls.cert and tls.key`);
  }
  let refusal: SmtpRefusal | null = null;
  let drop = false;
  let delivered = 0;
  let discarded = 0;
  const authAttempts: SmtpAuthAttempt[] = [];
  const isLocal = (a: string) => Promise.resolve(opts.isLocal ? opts.isLocal(a.toLowerCase()) : true);
  const lmtp = nodemailer.createTransport({
    host: opts.lmtp.host,
    port: opts.lmtp.port,
    lmtp: true,
    ignoreTLS: true,
    secure: false,
    logger: false,
  });
  const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

  const server = new SMTPServer({
    name: 'relay.mail.test',
    banner: 'test relay',
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: security === 'none',
    disabledCommands: security === 'none' ? ['STARTTLS'] : [],
    secure: security === 'ssl',
    ...(opts.tls ? { cert: opts.tls.cert, key: opts.tls.key, minVersion: 'TLSv1.2' as const } : {}),
    logger: false,
    closeTimeout: 2000,
    size: 25 * 1024 * 1024,
    onAuth(auth, session, cb) {
      const user = String(auth.username ?? '')
        .trim()
        .toLowerCase();
      authAttempts.push({ user, secure: session.secure });
      Promise.resolve(opts.authenticate(user, String(auth.password ?? '')))
        .then((ok) => (ok ? cb(null, { user }) : cb(smtpError(535, 'Authentication failed'))))
        .catch(() => cb(smtpError(454, 'Temporary authentication failure')));
    },
    onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, cb) {
      if (!session.user) return cb(smtpError(530, 'Authentication required'));
      if (address.address.toLowerCase() !== String(session.user).toLowerCase()) {
        return cb(smtpError(553, `Sender address not owned by the authenticated user`));
      }
      cb();
    },
    onRcptTo(address: SMTPServerAddress, _session, cb) {
      isLocal(address.address)
        .then((ok) =>
          ok || opts.nonLocal === 'discard' ? cb() : cb(smtpError(550, 'Relaying denied: not a local mailbox')),
        )
        .catch(() => cb(smtpError(451, 'Temporary recipient lookup failure')));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (e) => cb(e));
      stream.on('end', () => {
        if (drop) {
          for (const conn of server.connections) if (conn.session.id === session.id) conn._socket.destroy();
          return;
        }
        if (refusal) return cb(smtpError(refusal.code, refusal.message));
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const all = session.envelope.rcptTo.map((r) => r.address);
        Promise.all(all.map((a) => isLocal(a)))
          .then((local) => {
            const to = all.filter((_, i) => local[i]);
            discarded += all.length - to.length;
            return to.length
              ? lmtp.sendMail({ envelope: { from, to }, raw: Buffer.concat(chunks) })
              : { rejected: [] as string[] };
          })
          .then((info) => {
            if (info.rejected?.length) return cb(smtpError(550, 'Delivery failed for some recipients'));
            delivered++;
            cb();
          })
          .catch(() => cb(smtpError(451, 'Local delivery failed, try again later')));
      });
    },
  });
  server.on('error', () => {
    /* per-connection errors are answered to that client */
  });
  const net = await new Promise<import('node:net').Server>((resolve, reject) => {
    const s = server.listen(opts.port ?? 0, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const port = (net.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    get delivered() {
      return delivered;
    },
    get discarded() {
      return discarded;
    },
    security,
    authAttempts,
    refuse(r) {
      refusal = r;
    },
    dropAfterData(on) {
      drop = on;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          lmtp.close();
          resolve();
        });
      }),
  };
}
