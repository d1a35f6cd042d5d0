import { expect } from 'chai';
import {
  InvalidRecipientError,
  checkRecipientId,
  normalizePhone,
  recipientAddress,
} from '../../../../jobs/adapters/chat-providers/index.js';

describe('chat providers: recipient normalisation', () => {
  it('0812-3456 7890 -> 6281234567890 (separators dropped, leading 0 -> 62)', () => {
    expect(normalizePhone('0812-3456 7890')).to.equal('6281234567890');
  });

  it('accepts the usual ways of writing the same number', () => {
    for (const raw of [
      '+62 812 3456 7890',
      '+62-812-3456-7890',
      '(0812) 3456.7890',
      '0062 812 3456 7890',
      '6281234567890',
      ' 0812/3456/7890 ',
      '0812\u00a03456\u00a07890',
    ]) {
      expect(normalizePhone(raw), raw).to.equal('6281234567890');
    }
  });

  it("uses the tenant's calling code for a leading 0, never for + or 00", () => {
    expect(normalizePhone('012-345 6789', '60')).to.equal('60123456789');
    expect(normalizePhone('+65 6123 4567', '60')).to.equal('6561234567');
    expect(normalizePhone('0065 6123 4567', '60')).to.equal('6561234567');
  });

  it('refuses letters, too few or too many digits and a missing country code', () => {
    for (const raw of [
      '',
      '   ',
      'abc',
      '0812-3456-789x',
      '0812',
      '+62 81',
      '+0812 3456 7890',
      '1234567890123456',
      '++6281234567890',
    ]) {
      expect(() => normalizePhone(raw), JSON.stringify(raw)).to.throw(InvalidRecipientError);
    }
  });

  it('bounds are 8 to 15 digits after normalisation', () => {
    expect(() => normalizePhone('+1234567')).to.throw(InvalidRecipientError);
    expect(normalizePhone('+12345678')).to.equal('12345678');
    expect(normalizePhone('+123456789012345')).to.equal('123456789012345');
    expect(() => normalizePhone('+1234567890123456')).to.throw(InvalidRecipientError);
  });

  it('refuses a calling code that is not 1 to 3 digits', () => {
    expect(() => normalizePhone('0812 3456 7890', '0062')).to.throw(RangeError);
    expect(() => normalizePhone('0812 3456 7890', '+62')).to.throw(RangeError);
  });

  it('group and conversation ids pass untouched; waha gets <digits>@c.us for phones', () => {
    expect(recipientAddress('wablas', { kind: 'group', value: '6281218444-87687324' })).to.equal('6281218444-87687324');
    expect(recipientAddress('waha', { kind: 'group', value: '120363025246125486@g.us' })).to.equal(
      '120363025246125486@g.us',
    );
    expect(recipientAddress('messenger', { kind: 'conversation', value: '24012345678901234' })).to.equal(
      '24012345678901234',
    );
    expect(recipientAddress('waha', { kind: 'phone', value: '0812-3456 7890' })).to.equal('6281234567890@c.us');
    expect(recipientAddress('fonnte', { kind: 'phone', value: '0812-3456 7890' })).to.equal('6281234567890');
    expect(recipientAddress('fonnte', { kind: 'phone', value: '012-345 6789' }, '60')).to.equal('60123456789');
  });

  it('ids: trimmed, 1 to 200 characters, no control characters', () => {
    expect(checkRecipientId('  abc-123@g.us ')).to.equal('abc-123@g.us');
    for (const raw of ['', '  ', 'a'.repeat(201), 'abc\r\nX-Injected: 1', 'a\u0000b']) {
      expect(() => checkRecipientId(raw), JSON.stringify(raw)).to.throw(InvalidRecipientError);
    }
  });
});
