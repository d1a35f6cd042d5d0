import { expect } from 'chai';
import { flag, ilikeContains, MAX_SEARCH_TERMS, prefixTsQuery } from '../../../api/external/query.js';
import { env } from '../../helpers/env.js';

describe('external v1: search helpers (api/external/query.ts)', () => {
  it('ilikeContains escapes %, _ and \\ so that the search is a literal substring', () => {
    expect(ilikeContains('abc')).to.equal('%abc%');
    expect(ilikeContains('10%_off\\')).to.equal('%10\\%\\_off\\\\%');
  });

  it('prefixTsQuery: one AND-ed prefix term per word, operators stripped, words only as bindings', () => {
    expect(prefixTsQuery('v', undefined)).to.equal(null);
    expect(prefixTsQuery('v', '   ')).to.equal(null);
    expect(prefixTsQuery('v', "& | ! ( ) : * < > ' \\")).to.equal(null);
    const plain = prefixTsQuery('v', 'Siti  Rah')!;
    expect(plain.sql).to.equal('v @@ (?::tsquery && ?::tsquery)');
    expect(plain.bindings).to.deep.equal(["'siti':*", "'rah':*"]);
    const mixed = prefixTsQuery('v', "o'brien:* john.doe@exa")!;
    expect(mixed.sql).to.equal("v @@ (?::tsquery && ?::tsquery && (?::tsquery || to_tsquery('simple', ?)))");
    expect(mixed.bindings).to.deep.equal(["'o':*", "'brien':*", "'john.doe@exa':*", "'john.doe@exa':*"]);
    for (const b of [...plain.bindings, ...mixed.bindings]) expect(b.slice(1, -3)).not.to.match(/['\\]/);
    const many = prefixTsQuery('v', Array.from({ length: 20 }, (_, i) => `w${i}`).join(' '))!;
    expect(many.bindings).to.have.length(MAX_SEARCH_TERMS);
  });

  it('prefixTsQuery output is valid tsquery for hostile input (checked by PostgreSQL)', async () => {
    for (const s of [
      "a'b",
      'x\\y',
      "'; drop table customers; --",
      'a:*b',
      '((a',
      'ä ö ü',
      '-',
      '@@',
      'a&b|c!d',
      'AB-12.c@d',
    ]) {
      const q = prefixTsQuery("to_tsvector('simple', 'hello world')", s);
      if (!q) continue;
      const r = await env.knex.raw(`select ${q.sql} as m`, q.bindings);
      expect(r.rows[0].m, s).to.be.a('boolean');
    }
    const hit = prefixTsQuery("to_tsvector('simple', 'hello world')", 'HEL wor')!;
    expect((await env.knex.raw(`select ${hit.sql} as m`, hit.bindings)).rows[0].m).to.equal(true);
  });

  it('flag maps true/1 and false/0, and leaves absence undefined', () => {
    expect([flag('true'), flag('1'), flag('false'), flag('0'), flag(undefined)]).to.deep.equal([
      true,
      true,
      false,
      false,
      undefined,
    ]);
  });
});
