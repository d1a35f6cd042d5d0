import { expect } from 'chai';
import {
  classifyImapError,
  classifySmtpError,
  formatRfc2822,
  MailAuthError,
  MailServerError,
  poolKey,
  replySubject,
  scrubSecret,
  threadHeaders,
} from '../../../../jobs/adapters/mailbox-client/index.js';

describe('mailbox client: pure rules', () => {
  describe('replySubject (no "Re:" stacking)', () => {
    const cases: [string, string][] = [
      ['Order 42', 'Re: Order 42'],
      ['Re: Order 42', 'Re: Order 42'],
      ['RE: Order 42', 'Re: Order 42'],
      ['re:Order 42', 'Re: Order 42'],
      ['Re[2]: Order 42', 'Re: Order 42'],
      ['Re(3): Order 42', 'Re: Order 42'],
      ['Re: RE: re: Order 42', 'Re: Order 42'],
      ['Fwd: Order 42', 'Re: Fwd: Order 42'],
      ['Regarding the order', 'Re: Regarding the order'],
      ['', 'Re:'],
    ];
    for (const [input, want] of cases) {
      it(`${JSON.stringify(input)} -> ${JSON.stringify(want)}`, () => expect(replySubject(input)).to.equal(want));
    }
  });

  describe('threadHeaders (RFC 5322 §3.6.4)', () => {
    it('References = parent References + parent Message-ID; In-Reply-To = parent Message-ID', () => {
      expect(threadHeaders({ messageId: '<c@x>', references: ['<a@x>', '<b@x>'], inReplyTo: ['<b@x>'] })).to.deep.equal(
        { inReplyTo: '<c@x>', references: ['<a@x>', '<b@x>', '<c@x>'] },
      );
    });
    it('without References, a single-id In-Reply-To comes first', () => {
      expect(threadHeaders({ messageId: '<c@x>', references: [], inReplyTo: ['<b@x>'] })).to.deep.equal({
        inReplyTo: '<c@x>',
        references: ['<b@x>', '<c@x>'],
      });
    });
    it('an In-Reply-To with several ids is not used', () => {
      expect(threadHeaders({ messageId: '<c@x>', references: [], inReplyTo: ['<a@x>', '<b@x>'] })).to.deep.equal({
        inReplyTo: '<c@x>',
        references: ['<c@x>'],
      });
    });
    it('a parent without Message-ID gives no In-Reply-To', () => {
      expect(threadHeaders({ messageId: '', references: [], inReplyTo: [] })).to.deep.equal({
        inReplyTo: null,
        references: [],
      });
    });
  });

  it('formatRfc2822 writes an RFC 2822 date-time in UTC', () => {
    expect(formatRfc2822(new Date('2026-11-21T09:05:03+02:00'))).to.equal('Sat, 21 Nov 2026 07:05:03 +0000');
    expect(formatRfc2822('not a date')).to.equal('');
  });

  describe('error classification', () => {
    it('IMAP: authenticationFailed / AUTHENTICATIONFAILED -> MailAuthError; refused / closed / timeout -> MailServerError', () => {
      expect(classifyImapError({ authenticationFailed: true })).to.be.instanceOf(MailAuthError);
      expect(classifyImapError({ serverResponseCode: 'AUTHENTICATIONFAILED', responseText: 'x' })).to.be.instanceOf(
        MailAuthError,
      );
      const refused = classifyImapError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      expect(refused).to.be.instanceOf(MailServerError);
      expect((refused as MailServerError).code).to.equal('ECONNREFUSED');
      expect((classifyImapError({ code: 'CONNECT_TIMEOUT' }) as MailServerError).code).to.equal('CONNECT_TIMEOUT');
      expect((classifyImapError({ code: 'NoConnection' }) as MailServerError).message).to.equal(
        'IMAP connection closed by the server',
      );
    });
    it('IMAP: quoted server text never carries the password', () => {
      const e = classifyImapError(
        { responseStatus: 'NO', responseText: 'mailbox hunter2secret is over quota' },
        'hunter2secret',
      );
      expect(e).to.be.instanceOf(MailServerError);
      expect(e.message).to.equal('IMAP server refused the command: mailbox [redacted] is over quota');
    });
    it('SMTP: 535 / EAUTH -> MailAuthError; other replies and socket errors -> MailServerError', () => {
      expect(
        classifySmtpError({ code: 'EAUTH', responseCode: 535, response: '535 Authentication failed' }),
      ).to.be.instanceOf(MailAuthError);
      const refused = classifySmtpError(
        { code: 'EMESSAGE', responseCode: 554, response: '554 no pw123', command: 'DATA' },
        'pw123',
      );
      expect(refused).to.be.instanceOf(MailServerError);
      expect((refused as MailServerError).code).to.equal('SMTP_554');
      expect(refused.message).to.equal('SMTP server refused (DATA): 554 no [redacted]');
      expect((classifySmtpError({ code: 'ESOCKET' }) as MailServerError).code).to.equal('ESOCKET');
    });
    it('scrubSecret removes plain, URI-encoded and base64 forms and bounds the length', () => {
      expect(scrubSecret('a p@ss b p%40ss c cEBzcw==', 'p@ss')).to.equal('a [redacted] b [redacted] c [redacted]');
      expect(scrubSecret('x'.repeat(500), 'zz').length).to.equal(303);
    });
  });

  it('poolKey is a SHA-256 hex digest that differs per password, host and port, and never contains the password', () => {
    const ep = { host: '127.0.0.1', port: 143, security: 'none' as const };
    const k1 = poolKey({ email: 'a@x.test', password: 'pw-one' }, ep);
    expect(k1).to.match(/^[0-9a-f]{64}$/);
    expect(k1).to.not.contain('pw-one');
    expect(poolKey({ email: 'A@x.test', password: 'pw-one' }, ep)).to.equal(k1);
    expect(poolKey({ email: 'a@x.test', password: 'pw-two' }, ep)).to.not.equal(k1);
    expect(poolKey({ email: 'a@x.test', password: 'pw-one' }, { ...ep, port: 144 })).to.not.equal(k1);
    expect(poolKey({ email: 'a@x.test', password: 'pw-one' }, { ...ep, host: '127.0.0.2' })).to.not.equal(k1);
  });
});
