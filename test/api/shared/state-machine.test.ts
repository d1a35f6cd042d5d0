import { expect } from 'chai';
import { stateMachine } from '../../../api/shared/state-machine.js';
import { InvalidTransition } from '../../../api/errors.js';
import { describeError } from '../../../api/http/error-table.js';

type Status = 'draft' | 'pending' | 'approved' | 'rejected' | 'paid';
const requests = stateMachine<Status, 'submit' | 'approve' | 'reject' | 'pay'>({
  submit: { from: ['draft'], to: 'pending' },
  approve: { from: ['pending'], to: 'approved' },
  reject: { from: ['pending', 'approved'], to: 'rejected' },
  pay: { from: ['approved'], to: 'paid' },
});

describe('api/shared/state-machine.ts (DESIGN.md §10 INVALID_TRANSITION)', () => {
  it('answers the next state for every allowed transition', () => {
    expect(requests.next('draft', 'submit')).to.equal('pending');
    expect(requests.next('pending', 'approve')).to.equal('approved');
    expect(requests.next('approved', 'reject')).to.equal('rejected');
    expect(requests.next('approved', 'pay')).to.equal('paid');
  });

  it('refuses every other pair with 422 INVALID_TRANSITION naming the state and the action, errors.status set', () => {
    const states: Status[] = ['draft', 'pending', 'approved', 'rejected', 'paid'];
    let refused = 0;
    for (const s of states) {
      for (const a of ['submit', 'approve', 'reject', 'pay'] as const) {
        if (requests.can(s, a)) continue;
        refused += 1;
        let err: unknown;
        try {
          requests.next(s, a);
        } catch (e) {
          err = e;
        }
        expect(err, `${s} -> ${a}`).to.be.instanceOf(InvalidTransition);
        const http = describeError(err);
        expect(http.status).to.equal(422);
        expect(http.code).to.equal('INVALID_TRANSITION');
        expect(http.message).to.include(s).and.include(a);
        expect(http.errors?.status?.[0]).to.equal(http.message);
      }
    }
    expect(refused).to.equal(20 - 5);
  });

  it('lists the actions allowed from a state in table order', () => {
    expect(requests.actionsFrom('pending')).to.deep.equal(['approve', 'reject']);
    expect(requests.actionsFrom('paid')).to.deep.equal([]);
  });
});
