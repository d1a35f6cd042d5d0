import { expect } from 'chai';
import { classifySendFailure, replyCode } from '../../jobs/email/send-outcome.js';
import { MailAuthError, MailServerError } from '../../jobs/adapters/mailbox-client/index.js';

/** jobs/email/send-outcome.ts: what a failed submission of a reply means (issue 9 item 5). */
describe('email-send: classifySendFailure', () => {
  const smtp = (code: string, msg = `SMTP server refused (DATA): ${code}`) => new MailServerError('smtp', code, msg);

  it('a 5xx reply or a refused login is final, whatever the phase', () => {
    for (const started of [false, true]) {
      expect(classifySendFailure(smtp('SMTP_554'), started)).to.deep.include({ kind: 'refused', code: 'smtp_554' });
      expect(classifySendFailure(smtp('SMTP_550'), started)).to.deep.include({ kind: 'refused', code: 'smtp_550' });
      expect(classifySendFailure(new MailAuthError('smtp'), started)).to.deep.include({
        kind: 'refused',
        code: 'auth_failed',
      });
    }
  });

  it('a 4xx reply is known not accepted: retried, before or after the body', () => {
    expect(classifySendFailure(smtp('SMTP_451'), false)).to.deep.include({ kind: 'retry', code: 'smtp_451' });
    expect(classifySendFailure(smtp('SMTP_452'), true)).to.deep.include({ kind: 'retry', code: 'smtp_452' });
  });

  it('no reply before the body: retried (DNS, refused, dropped, timeout, handshake, abort); a certificate refused is final', () => {
    for (const code of ['ENOTFOUND', 'ECONNREFUSED', 'ESOCKET', 'ECONNECTION', 'ETIMEDOUT', 'TLS_HANDSHAKE', 'ABORTED'])
      expect(classifySendFailure(smtp(code, `SMTP connection failed (${code})`), false)).to.deep.include({
        kind: 'retry',
        code: code.toLowerCase(),
      });
    expect(classifySendFailure(smtp('TLS_CERT_UNTRUSTED'), false)).to.deep.include({
      kind: 'refused',
      code: 'tls_failed',
    });
    expect(classifySendFailure(smtp('STARTTLS_UNAVAILABLE'), false)).to.deep.include({
      kind: 'refused',
      code: 'tls_failed',
    });
  });

  it('no reply after the body started: delivery_unknown, with the cause in the message', () => {
    const f = classifySendFailure(smtp('ECONNECTION', 'SMTP connection failed (ECONNECTION)'), true);
    expect(f).to.deep.include({ kind: 'unknown', code: 'delivery_unknown' });
    expect(f.message).to.include('ECONNECTION').and.include('not sent again');
    expect(classifySendFailure(smtp('ABORTED'), true).kind).to.equal('unknown');
  });

  it('replyCode reads SMTP_<nnn> only', () => {
    expect(replyCode(smtp('SMTP_554'))).to.equal(554);
    expect(replyCode(smtp('ESOCKET'))).to.equal(null);
    expect(replyCode(new Error('SMTP_554'))).to.equal(null);
  });
});
