import { expect } from 'chai';
import { describeError } from '../../../api/http/error-table.js';
import { Conflict, InvalidTransition, ModuleDisabled, NotFound, SchemaMissing } from '../../../api/errors.js';
import { QueueUnavailableError } from '../../../jobs/queues.js';
import { MailAuthError, MailServerError } from '../../../jobs/adapters/mailbox-client/index.js';
import { StorageLimitError, StorageTypeError } from '../../../lib/storage/index.js';
import { money } from '../../../lib/money.js';
import { DatabaseTimeoutError } from '../../../db/unavailable.js';

describe('api/http/error-table.ts: the one class -> status and code table', () => {
  const cases: [string, () => unknown, number, string][] = [
    ['NotFound', () => new NotFound('Ticket'), 404, 'NOT_FOUND'],
    ['Conflict', () => new Conflict(), 409, 'CONFLICT'],
    ['ModuleDisabled', () => new ModuleDisabled('sales'), 403, 'module_disabled'],
    ['InvalidTransition', () => new InvalidTransition('paid', 'approve'), 422, 'INVALID_TRANSITION'],
    ['SchemaMissing', () => new SchemaMissing('sales_schema_missing', ['sales_orders']), 503, 'sales_schema_missing'],
    [
      'QueueUnavailableError (jobs/)',
      () => new QueueUnavailableError('x', new Error('down')),
      503,
      'QUEUE_UNAVAILABLE',
    ],
    ['MailAuthError', () => new MailAuthError('imap'), 401, 'mailbox_auth_failed'],
    ['MailServerError', () => new MailServerError('smtp', 'TIMEOUT', 'timed out'), 502, 'mail_server_error'],
    ['StorageLimitError', () => new StorageLimitError(10), 413, 'PAYLOAD_TOO_LARGE'],
    ['StorageTypeError', () => new StorageTypeError('text/plain', ['image/*']), 415, 'UNSUPPORTED_FILE_TYPE'],
    [
      'MoneyError',
      () => {
        try {
          money('1.234');
        } catch (e) {
          return e;
        }
        return null;
      },
      422,
      'VALIDATION_FAILED',
    ],
    [
      'pg unique',
      () => Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: '23505' }),
      409,
      'CONFLICT',
    ],
    ['unknown', () => new Error('SELECT secret FROM users'), 500, 'SERVER_ERROR'],
  ];
  for (const [name, make, status, code] of cases) {
    it(`${name} -> ${status} ${code}`, () => {
      const err = make();
      expect(err, name).to.be.instanceOf(Error);
      const http = describeError(err);
      expect(http.status).to.equal(status);
      expect(http.code).to.equal(code);
      expect(http.message).not.to.include('SELECT').and.not.to.include('duplicate key');
    });
  }

  describe('PostgreSQL unavailable -> 503 DATABASE_UNAVAILABLE with Retry-After (db/unavailable.ts)', () => {
    const pgError = (message: string, code: string) => Object.assign(new Error(message), { code });
    const unavailable: [string, unknown][] = [
      ['in recovery mode (57P03)', pgError('the database system is in recovery mode', '57P03')],
      ['terminated (57P01)', pgError('terminating connection due to administrator command', '57P01')],
      ['crash of another backend (57P02)', pgError('terminating connection because of crash', '57P02')],
      ['statement timeout (57014)', pgError('canceling statement due to statement timeout', '57014')],
      ['connection failure (08006)', pgError('connection failure', '08006')],
      ['too many connections (53300)', pgError('sorry, too many clients already', '53300')],
      ['a silent connection dropped', new DatabaseTimeoutError(3500)],
      [
        'knex pool timeout',
        Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
      ],
      ['pg connect timeout', new Error('timeout expired')],
      ['knex-prefixed', { message: 'select "k"."id" from "mail_api_keys" - Connection terminated unexpectedly' }],
      ['Objection-wrapped', Object.assign(new Error('wrapped'), { nativeError: pgError('in recovery', '57P03') })],
      [
        'refused connect',
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
      ],
      [
        'localhost tried twice',
        new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED', syscall: 'connect' })]),
      ],
    ];
    for (const [name, err] of unavailable) {
      it(name, () => {
        const http = describeError(err);
        expect(http).to.deep.include({
          status: 503,
          code: 'DATABASE_UNAVAILABLE',
          message: 'The database is unavailable. Retry later.',
        });
        expect(http.headers['Retry-After']).to.equal('5');
      });
    }

    it('leaves other errors alone: a unique violation, an errno without a socket call, a bad value', () => {
      expect(describeError(pgError('duplicate', '23505')).status).to.equal(409);
      expect(describeError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).status).to.equal(500);
      expect(describeError(pgError('invalid input syntax', '22P02')).status).to.equal(422);
      expect(describeError(new Error('Connection to the panel terminated')).status).to.equal(500);
    });
  });

  it('keeps Retry-After on the 503s and names nothing of an unknown error', () => {
    expect(describeError(new QueueUnavailableError('q')).headers['Retry-After']).to.match(/^\d+$/);
    const unknown = describeError(new Error('boom: password=hunter2'));
    expect(unknown.known).to.equal(false);
    expect(JSON.stringify(unknown)).not.to.include('hunter2');
  });
});
