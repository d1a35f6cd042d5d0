import { expect } from 'chai';
import { describeError } from '../../../api/http/error-table.js';
import { Conflict, InvalidTransition, ModuleDisabled, NotFound, SchemaMissing } from '../../../api/errors.js';
import { QueueUnavailableError } from '../../../jobs/queues.js';
import { MailAuthError, MailServerError } from '../../../jobs/adapters/mailbox-client/index.js';
import { StorageLimitError, StorageTypeError } from '../../../lib/storage/index.js';
import { money } from '../../../lib/money.js';

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

  it('keeps Retry-After on the 503s and names nothing of an unknown error', () => {
    expect(describeError(new QueueUnavailableError('q')).headers['Retry-After']).to.match(/^\d+$/);
    const unknown = describeError(new Error('boom: password=hunter2'));
    expect(unknown.known).to.equal(false);
    expect(JSON.stringify(unknown)).not.to.include('hunter2');
  });
});
