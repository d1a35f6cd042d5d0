import { expect } from 'chai';
import { execa } from 'execa';
import {
  classifyHestiaExit,
  classifyHttpFailure,
  classifyNetworkError,
  createMailPanel,
  defaultPanelPort,
  panelErrorText,
  parseRetryAfter,
  PanelError,
  quotaToMegabytes,
  redactSecrets,
  shellQuote,
  validateCreateMailbox,
  validatePanelConfig,
  type MailPanelConfig,
} from '../../../../jobs/adapters/mail-panel/index.js';
import { isValidDomain, isValidLocalPart } from '../../../../jobs/adapters/mail-panel/validate.js';
import { perlQuoteMeta } from '../../../../jobs/adapters/mail-panel/cpanel.js';
import {
  directAdminList,
  isDirectAdminError,
  parseDirectAdminBody,
} from '../../../../jobs/adapters/mail-panel/directadmin.js';
import { hestiaAddMailAccountCommand } from '../../../../jobs/adapters/mail-panel/shell.js';

/** The argv a POSIX shell (dash, /bin/sh) makes of `words`: printf prints each word NUL-terminated. */
async function shellWords(words: string): Promise<string[]> {
  const { stdout } = await execa('sh', ['-c', `printf '%s\\0' ${words}`], { stripFinalNewline: false });
  return stdout.split('\0').slice(0, -1);
}

const valid = {
  domain: 'example.com',
  local_part: 'john.doe',
  password: 'correct-horse-9',
  real_name: 'John Doe',
  quota: '500M',
};

describe('mail panel adapters: pure functions', () => {
  describe('quotaToMegabytes', () => {
    it('converts M and G to MB and keeps null', () => {
      expect(quotaToMegabytes('500M')).to.equal(500);
      expect(quotaToMegabytes('2G')).to.equal(2048);
      expect(quotaToMegabytes('0M')).to.equal(0);
      expect(quotaToMegabytes('0500M')).to.equal(500);
      expect(quotaToMegabytes(null)).to.equal(null);
    });

    it('throws RangeError for anything else', () => {
      for (const q of ['500', '500m', '5.5G', 'M', '1T', ' 500M', '500M ', '-1M', '2097152G']) {
        expect(() => quotaToMegabytes(q), q).to.throw(RangeError);
      }
    });
  });

  describe('validateCreateMailbox', () => {
    it('accepts a valid input (and null quota / real_name)', () => {
      expect(validateCreateMailbox(valid)).to.deep.equal({});
      expect(validateCreateMailbox({ ...valid, quota: null, real_name: null })).to.deep.equal({});
      expect(validateCreateMailbox({ ...valid, local_part: 'a' })).to.deep.equal({});
      expect(validateCreateMailbox({ ...valid, local_part: 'Sales+EU_2-x' })).to.deep.equal({});
      expect(validateCreateMailbox({ ...valid, domain: 'xn--bcher-kva.example' })).to.deep.equal({});
      expect(validateCreateMailbox({ ...valid, password: `pa'ss; rm -rf / $(id) "x" \\ é` })).to.deep.equal({});
    });

    it('names the bad field for each kind of bad value', () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ local_part: '' }, 'local_part'],
        [{ local_part: 'john&quota=0' }, 'local_part'],
        [{ local_part: 'a..b' }, 'local_part'],
        [{ local_part: '.john' }, 'local_part'],
        [{ local_part: 'john.' }, 'local_part'],
        [{ local_part: "jo'hn" }, 'local_part'],
        [{ local_part: 'jo hn' }, 'local_part'],
        [{ local_part: 'john;id' }, 'local_part'],
        [{ local_part: '$(id)' }, 'local_part'],
        [{ local_part: 'a'.repeat(65) }, 'local_part'],
        [{ local_part: 'jöhn' }, 'local_part'],
        [{ local_part: 42 }, 'local_part'],
        [{ domain: 'localhost' }, 'domain'],
        [{ domain: 'exa_mple.com' }, 'domain'],
        [{ domain: '-a.com' }, 'domain'],
        [{ domain: 'a-.com' }, 'domain'],
        [{ domain: 'example.com.' }, 'domain'],
        [{ domain: '1.2.3.4' }, 'domain'],
        [{ domain: `${'a'.repeat(64)}.com` }, 'domain'],
        [{ domain: 'bücher.example' }, 'domain'],
        [{ domain: 'a.com/x' }, 'domain'],
        [{ password: 'short-9' }, 'password'],
        [{ password: 'new\nline-password' }, 'password'],
        [{ password: 'nul\u0000-password-x' }, 'password'],
        [{ password: 'x'.repeat(129) }, 'password'],
        [{ password: undefined }, 'password'],
        [{ quota: '500' }, 'quota'],
        [{ quota: '1T' }, 'quota'],
        [{ quota: 500 }, 'quota'],
        [{ quota: '99999999999M' }, 'quota'],
        [{ real_name: 'a\nb' }, 'real_name'],
        [{ real_name: 'x'.repeat(191) }, 'real_name'],
        [{ real_name: 7 }, 'real_name'],
      ];
      for (const [patch, field] of cases) {
        const errors = validateCreateMailbox({ ...valid, ...patch });
        expect(Object.keys(errors), JSON.stringify(patch)).to.deep.equal([field]);
        expect(errors[field]![0]).to.be.a('string').and.not.equal('');
      }
    });

    it('never echoes the password in a reason', () => {
      const errors = validateCreateMailbox({ ...valid, password: 'secret\n-password-zz' });
      expect(JSON.stringify(errors)).not.to.include('secret');
    });

    it('isValidLocalPart / isValidDomain agree with the rules', () => {
      expect(isValidLocalPart('a.b_c+d-e')).to.equal(true);
      expect(isValidLocalPart('a..b')).to.equal(false);
      expect(isValidDomain('mail.example.co.uk')).to.equal(true);
      expect(isValidDomain('example.123')).to.equal(false);
    });
  });

  describe('classifyHttpFailure', () => {
    it('classifies by status', () => {
      expect(classifyHttpFailure(401, '')).to.equal('auth');
      expect(classifyHttpFailure(403, { errors: ['nope'] })).to.equal('auth');
      expect(classifyHttpFailure(429, '')).to.equal('rate_limited');
      expect(classifyHttpFailure(409, '')).to.equal('exists');
      for (const s of [408, 500, 502, 503, 504, 520])
        expect(classifyHttpFailure(s, ''), String(s)).to.equal('transient');
      for (const s of [400, 404, 405, 422, 501, 505])
        expect(classifyHttpFailure(s, 'bad'), String(s)).to.equal('permanent');
      expect(classifyHttpFailure(400, { text: 'That mailbox already exists' })).to.equal('exists');
    });

    it('reads errors reported inside a 200 body (cPanel and DirectAdmin shapes)', () => {
      expect(
        classifyHttpFailure(200, { status: 0, errors: ['The account john@example.com already exists!'] }),
      ).to.equal('exists');
      expect(
        classifyHttpFailure(200, { result: { status: 0, errors: ['The account x@example.com already exists!'] } }),
      ).to.equal('exists');
      expect(classifyHttpFailure(200, { status: 0, errors: ['Access denied'] })).to.equal('auth');
      expect(classifyHttpFailure(200, { status: 0, errors: ['The system is busy, try again later.'] })).to.equal(
        'transient',
      );
      expect(classifyHttpFailure(200, { status: 0, errors: ['Too many requests'] })).to.equal('rate_limited');
      expect(classifyHttpFailure(200, { status: 0, errors: ['The password is too weak.'] })).to.equal('permanent');
      expect(
        classifyHttpFailure(200, {
          error: '1',
          text: 'Unable to create E-Mail account',
          details: 'That user already exists',
        }),
      ).to.equal('exists');
      expect(classifyHttpFailure(200, { error: '1', text: 'Domain does not belong to you' })).to.equal('auth');
      expect(classifyHttpFailure(200, { error: '1', text: 'Invalid quota' })).to.equal('permanent');
      expect(classifyHttpFailure(200, 'error=1&text=x')).to.equal('permanent');
    });

    it('panelErrorText joins the readable parts and strips HTML', () => {
      expect(panelErrorText({ status: 0, errors: ['a', 'b'] })).to.equal('a b');
      expect(panelErrorText({ error: '1', text: 'Unable', details: 'exists' })).to.equal('Unable exists');
      expect(panelErrorText('<html><b>Login</b> page</html>')).to.equal('Login page');
    });
  });

  describe('classifyNetworkError', () => {
    it('connection-level failures are transient', () => {
      for (const code of [
        'ECONNREFUSED',
        'ETIMEDOUT',
        'ECONNRESET',
        'EAI_AGAIN',
        'EHOSTUNREACH',
        'UND_ERR_CONNECT_TIMEOUT',
      ]) {
        expect(classifyNetworkError(Object.assign(new Error(code), { code })), code).to.equal('transient');
        const wrapped = new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
        expect(classifyNetworkError(wrapped), `wrapped ${code}`).to.equal('transient');
      }
      expect(
        classifyNetworkError(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      ).to.equal('transient');
      expect(
        classifyNetworkError(
          Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' }),
        ),
      ).to.equal('transient');
    });

    it('certificate and TLS errors, unknown hosts and key files are permanent', () => {
      for (const code of [
        'CERT_HAS_EXPIRED',
        'DEPTH_ZERO_SELF_SIGNED_CERT',
        'SELF_SIGNED_CERT_IN_CHAIN',
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        'ERR_TLS_CERT_ALTNAME_INVALID',
        'ERR_SSL_WRONG_VERSION_NUMBER',
        'ENOTFOUND',
        'ENOENT',
        'EACCES',
      ]) {
        const wrapped = new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
        expect(classifyNetworkError(wrapped), code).to.equal('permanent');
      }
      expect(
        classifyNetworkError(Object.assign(new Error('Host denied (verification failed)'), { level: 'handshake' })),
      ).to.equal('permanent');
    });

    it('ssh2 authentication failures are auth; unknown errors transient', () => {
      expect(
        classifyNetworkError(
          Object.assign(new Error('All configured authentication methods failed'), { level: 'client-authentication' }),
        ),
      ).to.equal('auth');
      expect(classifyNetworkError(new Error('something odd'))).to.equal('transient');
      expect(classifyNetworkError('not even an error')).to.equal('transient');
    });
  });

  it('parseRetryAfter reads seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(parseRetryAfter('120', now)).to.equal(120_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now)).to.equal(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(undefined);
    expect(parseRetryAfter(null, now)).to.equal(undefined);
  });

  it("classifyHestiaExit follows Hestia's return codes", () => {
    expect(classifyHestiaExit(4)).to.equal('exists');
    for (const c of [13, 14, 15, 17, 20, 75, null]) expect(classifyHestiaExit(c), String(c)).to.equal('transient');
    for (const c of [1, 2, 3, 5, 8, 10, 11, 126, 127]) expect(classifyHestiaExit(c), String(c)).to.equal('permanent');
  });

  it('redactSecrets removes raw, percent-, form- and JSON-encoded forms', () => {
    const secret = 'p@ss word&"x"';
    const text = `a ${secret} b ${encodeURIComponent(secret)} c ${new URLSearchParams({ p: secret }).toString()} d ${JSON.stringify(secret)}`;
    const out = redactSecrets(text, [secret, null, undefined, 'ab']);
    expect(out).not.to.include('p@ss');
    expect(out).not.to.include('p%40ss');
    expect(out.match(/\[redacted\]/g)).to.have.length(4);
  });

  describe('shellQuote', () => {
    const hostile = [
      "pa'ss; rm -rf / $(id)",
      '`id`',
      '$HOME',
      '"double"',
      'back\\slash',
      "'",
      "''",
      '',
      ' lead and trail ',
      'semi;colon|pipe&amp',
      'new\nline',
      'tab\there',
      '*glob?[a]',
      '~user',
      '!bang',
      'é ü 中文',
    ];
    it('makes every value exactly one literal word for a POSIX shell', async () => {
      const argv = await shellWords(hostile.map(shellQuote).join(' '));
      expect(argv).to.deep.equal(hostile);
    });

    it('refuses NUL', () => {
      expect(() => shellQuote('a\u0000b')).to.throw(TypeError);
    });

    it('keeps a hostile local part literal even if validation were bypassed', async () => {
      const cmd = hestiaAddMailAccountCommand(
        { hestiaDir: '/usr/local/hestia', sudo: false },
        'admin',
        'example.com',
        "x'; touch /tmp/pwned; '",
        500,
      );
      const inner = cmd.slice(cmd.indexOf("'/usr/local/hestia/bin/v-add-mail-account'"), cmd.lastIndexOf('; rc=$?'));
      // replace "$f" (a parameter the script sets) with a literal so printf can show the words
      const argv = await shellWords(inner.replace('"$f"', 'FILE'));
      expect(argv).to.deep.equal([
        '/usr/local/hestia/bin/v-add-mail-account',
        'admin',
        'example.com',
        "x'; touch /tmp/pwned; '",
        'FILE',
        '500',
      ]);
    });
  });

  it('perlQuoteMeta escapes every non-word character', () => {
    expect(perlQuoteMeta('a.b+c@example.com')).to.equal('a\\.b\\+c\\@example\\.com');
  });

  it('DirectAdmin bodies: JSON, urlencoded, lists, HTML', () => {
    expect(parseDirectAdminBody('error=1&text=Unable&details=exists%21', undefined)).to.deep.equal({
      error: '1',
      text: 'Unable',
      details: 'exists!',
    });
    expect(directAdminList(parseDirectAdminBody('list[]=a&list[]=b', undefined)!)).to.deep.equal(['a', 'b']);
    expect(directAdminList(parseDirectAdminBody('', ['x', 'y'])!)).to.deep.equal(['x', 'y']);
    expect(directAdminList({ 0: 'p', 1: 'q' })).to.deep.equal(['p', 'q']);
    expect(parseDirectAdminBody('<html>login</html>', undefined)).to.equal(null);
    expect(isDirectAdminError({ error: '1' })).to.equal(true);
    expect(isDirectAdminError({ error: '0', text: 'ok' })).to.equal(false);
    expect(isDirectAdminError(['a'])).to.equal(false);
  });

  describe('panel configuration', () => {
    const base: MailPanelConfig = {
      type: 'cpanel',
      host: 'panel.example.com',
      port: 2083,
      user: 'cpuser',
      password: 'TOKEN123',
      ssl: true,
    };

    it('defaultPanelPort', () => {
      expect(defaultPanelPort('cpanel')).to.equal(2083);
      expect(defaultPanelPort('cpanel', false)).to.equal(2082);
      expect(defaultPanelPort('directadmin')).to.equal(2222);
      expect(defaultPanelPort('hestia')).to.equal(22);
    });

    it('accepts usable configurations', () => {
      expect(validatePanelConfig(base)).to.deep.equal({});
      expect(validatePanelConfig({ ...base, type: 'directadmin', user: 'admin|owner', port: 2222 })).to.deep.equal({});
      expect(
        validatePanelConfig({
          ...base,
          type: 'hestia',
          host: '192.0.2.7',
          port: 22,
          password: null,
          ssh_key_path: '/etc/isp/id_rsa',
        }),
      ).to.deep.equal({});
      expect(validatePanelConfig({ ...base, host: '2001:db8::1' })).to.deep.equal({});
    });

    it('rejects unusable ones by field, without echoing secrets, and createMailPanel throws before connecting', () => {
      const cases: [Partial<MailPanelConfig>, string][] = [
        [{ host: 'https://panel.example.com' }, 'host'],
        [{ host: 'panel.example.com:2083' }, 'host'],
        [{ host: 'a b' }, 'host'],
        [{ port: 0 }, 'port'],
        [{ port: 70000 }, 'port'],
        [{ user: 'a:b' }, 'user'],
        [{ user: 'a\r\nX-Injected: 1' }, 'user'],
        [{ password: null }, 'password'],
        [{ password: 'tok\r\nen' }, 'password'],
        // an unsupported panel type TypeScript would refuse, to test the runtime refusal
        [{ type: 'plesk' as never }, 'type'],
        [{ type: 'hestia', password: null, ssh_key_path: null }, 'ssh_key_path'],
        [{ type: 'hestia', ssh_key_path: 'relative/key' }, 'ssh_key_path'],
        [{ type: 'hestia', panel_user: 'bad user' }, 'panel_user'],
        [{ type: 'hestia', host_key_sha256: 'nope' }, 'host_key_sha256'],
      ];
      for (const [patch, field] of cases) {
        const cfg = { ...base, ...patch } as MailPanelConfig;
        expect(Object.keys(validatePanelConfig(cfg)), JSON.stringify(patch)).to.include(field);
        let thrown: unknown;
        try {
          createMailPanel(cfg);
        } catch (e) {
          thrown = e;
        }
        expect(thrown, JSON.stringify(patch)).to.be.instanceOf(PanelError);
        expect((thrown as PanelError).kind).to.equal('permanent');
        expect((thrown as PanelError).fields).to.have.property(field);
        expect((thrown as PanelError).message).not.to.include('tok');
      }
    });
  });
});
