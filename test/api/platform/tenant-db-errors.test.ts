import { expect } from 'chai';
import { isUnreachable } from '../../../api/platform/tenant-db/report-base.js';

const err = (message: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), extra);

/** Issue 14 (finishing): a report error is "unreachable" (200, failing check) only for connection-class errors. */
describe('tenant databases: report error classifier', () => {
  it('connection-class errors are unreachable', () => {
    const cases: [string, Error][] = [
      ['refused', err('connect ECONNREFUSED 127.0.0.1:1', { code: 'ECONNREFUSED' })],
      ['timed out', err('connect ETIMEDOUT', { code: 'ETIMEDOUT' })],
      ['no such host', err('getaddrinfo ENOTFOUND db.invalid', { code: 'ENOTFOUND' })],
      ['host unreachable', err('connect EHOSTUNREACH', { code: 'EHOSTUNREACH' })],
      ['admin shutdown', err('terminating connection due to administrator command', { code: '57P01' })],
      ['cannot connect now', err('the database system is starting up', { code: '57P03' })],
      ['bad password', err('password authentication failed for user "x"', { code: '28P01' })],
      ['no pg_hba entry', err('no pg_hba.conf entry for host', { code: '28000' })],
      ['database missing', err('database "isp_t_x" does not exist', { code: '3D000' })],
      ['statement timeout', err('canceling statement due to statement timeout', { code: '57014' })],
      ['connection exception class 08', err('connection failure', { code: '08006' })],
      ['connect timeout', err('Connection terminated due to connection timeout')],
      ['dropped connection', err('Connection terminated unexpectedly')],
      ['pool acquire timeout', err('Knex: Timeout acquiring a connection.', { name: 'KnexTimeoutError' })],
    ];
    for (const [what, e] of cases) expect(isUnreachable(e), what).to.equal(true);
  });

  it('anything else is a bug: it propagates', () => {
    const cases: [string, unknown][] = [
      ['missing table', err('relation "tickets" does not exist', { code: '42P01' })],
      ['missing column', err('column x.foo does not exist', { code: '42703' })],
      ['syntax', err('syntax error at or near "SELEC"', { code: '42601' })],
      ['privilege', err('permission denied for table tickets', { code: '42501' })],
      ['unique violation', err('duplicate key value', { code: '23505' })],
      ['type error', new TypeError("Cannot read properties of undefined (reading 'rows')")],
      ['a string', 'boom'],
      ['null', null],
      ['numeric code', err('odd', { code: 57014 })],
    ];
    for (const [what, e] of cases) expect(isUnreachable(e), what).to.equal(false);
  });
});
