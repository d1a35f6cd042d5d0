import { expect } from 'chai';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { crc32 } from 'node:zlib';
import {
  bearer,
  hashToken,
  mintToken,
  parseToken,
  tokenMatches,
  TOKEN_PREFIX,
  type TokenKind,
} from '../../lib/token.js';

/** Replaces one character at `i` by another hex digit (keeps the shape). */
function flip(s: string, i: number): string {
  return s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
}

/** lib/token.ts: the one token design (DESIGN.md §5, issue 2 item 4). */
describe('lib/token: one design for every token kind', () => {
  it('mints <prefix>_<id>_<64 hex secret><8 hex CRC-32> for every kind, and stores only the SHA-256', () => {
    for (const kind of Object.keys(TOKEN_PREFIX) as TokenKind[]) {
      const { token, hash } = mintToken(kind, 42);
      const m = /^([a-z]{4})_42_([0-9a-f]{64})([0-9a-f]{8})$/.exec(token);
      expect(m, kind).to.not.equal(null);
      expect(m![1]).to.equal(TOKEN_PREFIX[kind]);
      expect(m![3]).to.equal((crc32(token.slice(0, -8)) >>> 0).toString(16).padStart(8, '0'));
      expect(hash.equals(crypto.createHash('sha256').update(token).digest())).to.equal(true);
      expect(hash).to.have.length(32);
      expect(parseToken(token)).to.deep.equal({ kind, id: 42, token });
    }
  });

  it('draws a fresh 256-bit secret every time', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => mintToken('integration', 1).token.slice(7, 71)));
    expect(secrets.size).to.equal(50);
  });

  it('refuses malformed tokens without any store: shape, prefix, id, checksum, length', () => {
    const good = mintToken('integration', 7).token;
    const bad: [string, string | null | undefined][] = [
      ['empty', ''],
      ['null', null],
      ['undefined', undefined],
      ['garbage', 'garbage'],
      ['wrong checksum (secret changed)', flip(good, 20)],
      ['wrong checksum (crc changed)', flip(good, good.length - 1)],
      ['unknown prefix', good.replace(/^ispi/, 'abcd')],
      ['upper case', good.toUpperCase()],
      ['id 0', mintToken('integration', 0).token],
      ['leading zero id', good.replace('_7_', '_07_')],
      ['secret too short', good.slice(0, 20) + good.slice(22)],
      ['trailing space', `${good} `],
      ['too long', good + 'a'.repeat(60)],
      ['id beyond 2^53', mintToken('integration', '99999999999999999').token],
    ];
    for (const [label, raw] of bad) expect(parseToken(raw), label).to.equal(null);
  });

  it('compares hashes with crypto.timingSafeEqual (constant time)', () => {
    const { token, hash } = mintToken('login', 3);
    const original = crypto.timingSafeEqual;
    const calls: [Buffer, Buffer][] = [];
    crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.push([
        Buffer.from(a.buffer, a.byteOffset, a.byteLength),
        Buffer.from(b.buffer, b.byteOffset, b.byteLength),
      ]);
      return original(a, b);
    }) as typeof crypto.timingSafeEqual;
    syncBuiltinESMExports();
    try {
      expect(tokenMatches(token, hash)).to.equal(true);
      expect(tokenMatches(mintToken('login', 3).token, hash)).to.equal(false);
    } finally {
      crypto.timingSafeEqual = original;
      syncBuiltinESMExports();
    }
    expect(calls).to.have.length(2);
    expect(calls[0][0].equals(hashToken(token))).to.equal(true);
    expect(calls[0][1].equals(hash)).to.equal(true);
  });

  it('refuses a missing or wrong-length stored hash without comparing', () => {
    const { token } = mintToken('login', 3);
    expect(tokenMatches(token, null)).to.equal(false);
    expect(tokenMatches(token, undefined)).to.equal(false);
    expect(tokenMatches(token, Buffer.alloc(16))).to.equal(false);
  });

  it('reads the Bearer scheme only (any case), one token, no other schemes', () => {
    expect(bearer('Bearer abc')).to.equal('abc');
    expect(bearer('bearer   abc  ')).to.equal('abc');
    for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Token abc'])
      expect(bearer(h), String(h)).to.equal(null);
  });
});
